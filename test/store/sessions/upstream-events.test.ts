/**
 * The upstream watch lease and the list-change feed on the database under test: one holder at a time,
 * renewal, release and expiry hand-over (with when the previous holder's lease ended), and rows read
 * after a cursor.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { openDatabase } from '../../../src/store/database';
import type { Database } from '../../../src/store/schema';
import { UpstreamEvents } from '../../../src/store/sessions/upstream-events';
import { testStoreConfig } from '../../helpers/store';

let dir: string;
let db: Kysely<Database>;
let now = 1_000_000;
let events: UpstreamEvents;
beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-upstream-events-'));
  db = await openDatabase(await testStoreConfig(dir));
  events = new UpstreamEvents(db, () => now);
});
afterAll(async () => {
  await db?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

test('one holder at a time; renewal by the holder; release and expiry hand the lease over, saying when it ended', async () => {
  expect(await events.claimWatch('s1', 'a', 15_000)).toEqual({ mine: true });
  expect(await events.claimWatch('s1', 'b', 15_000)).toEqual({ mine: false, othersUntil: now + 15_000 });
  now += 10_000;
  expect((await events.claimWatch('s1', 'a', 15_000)).mine).toBe(true);
  // Still held (renewed): b waits.
  now += 10_000;
  expect((await events.claimWatch('s1', 'b', 15_000)).mine).toBe(false);
  // Released: b takes it at once and learns when a's lease ended.
  await events.releaseWatch('s1', 'a');
  const releasedAt = now;
  now += 1;
  expect(await events.claimWatch('s1', 'b', 15_000)).toEqual({ mine: true, othersUntil: releasedAt });
  // A stale release by the previous holder does not touch b's lease.
  await events.releaseWatch('s1', 'a');
  expect((await events.claimWatch('s1', 'a', 15_000)).mine).toBe(false);
  // b stops renewing: after expiry a takes it over.
  now += 15_001;
  expect((await events.claimWatch('s1', 'a', 15_000)).mine).toBe(true);
  // Scopes are independent.
  expect((await events.claimWatch('s2', 'b', 15_000)).mine).toBe(true);
});

test('changes are read after a cursor, oldest first', async () => {
  const start = await events.latestId();
  await events.record({ projectId: 'p', upstreamId: 'u', scope: 'u#none', kind: 'tools' });
  await events.record({ projectId: 'p', upstreamId: 'u', scope: 'u#none', kind: 'prompts' });
  const read = await events.after(start);
  expect(read.map((e) => e.kind)).toEqual(['tools', 'prompts']);
  expect(read[0]).toMatchObject({ projectId: 'p', upstreamId: 'u', scope: 'u#none' });
  expect(await events.after(read[1]?.id ?? 0)).toEqual([]);
  expect(await events.latestId()).toBe(read[1]?.id);
});
