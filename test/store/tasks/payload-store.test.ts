/**
 * The payload store on the database under test: payloads round-trip by id, are bound to their task and
 * kind, never sit in plaintext, and payload retention removes them once they are older than the cutoff,
 * whatever their task's state.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { Cipher, generateKey } from '../../../src/store/cipher';
import { openDatabase } from '../../../src/store/database';
import { PayloadStore } from '../../../src/store/tasks/payload-store';
import type { Database } from '../../../src/store/schema';
import { TaskStore, taskKeyOf } from '../../../src/store/tasks/task-store';
import { testStoreConfig } from '../../helpers/store';
import { newTask } from '../../helpers/task-rows';

let db: Kysely<Database>;
let payloads: PayloadStore;
let tasks: TaskStore;
let clock = new Date('2026-12-01T00:00:00Z');
const MARKER = `payload-marker-${randomUUID()}`;

beforeAll(async () => {
  db = await openDatabase(await testStoreConfig());
  const cipher = new Cipher({ activeKeyId: 'k1', keys: { k1: generateKey() } });
  payloads = new PayloadStore(db, cipher, () => clock);
  tasks = new TaskStore(db, cipher, { now: () => clock });
});
afterAll(async () => {
  await db?.destroy();
});

test('a payload round-trips by id and opens only for its own task and kind', async () => {
  const key = taskKeyOf(randomUUID());
  const id = await payloads.put(key, 'request', { arguments: { secret: MARKER } });
  expect(await payloads.get(id, key, 'request')).toEqual({ arguments: { secret: MARKER } });
  expect(await payloads.get(id, key, 'result')).toBeUndefined();
  expect(await payloads.get(id, taskKeyOf('other'), 'request')).toBeUndefined();
  const raw = await db.selectFrom('payloads').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  expect(Buffer.from(raw.ciphertext).includes(MARKER)).toBe(false);
});

test('payload retention deletes every payload stored before the cutoff, a running task’s included', async () => {
  await db.deleteFrom('payloads').execute();
  const running = taskKeyOf(randomUUID());
  await tasks.insertTask(newTask(running, clock.toISOString()));
  const keep = await payloads.put(running, 'request', { n: 1 });
  const syncCall = taskKeyOf(randomUUID());
  const old = await payloads.put(syncCall, 'result', { n: 2 });
  clock = new Date('2026-12-03T00:00:00Z');
  const fresh = await payloads.put(syncCall, 'request', { n: 3 });

  const purged = await tasks.purgePayloadsBefore('2026-12-02T00:00:00Z', 100);
  // The old result and the running task's arguments (needed for its first call only).
  expect(purged).toBe(2);
  expect(await payloads.get(old, syncCall, 'result')).toBeUndefined();
  expect(await payloads.get(keep, running, 'request')).toBeUndefined();
  expect(await payloads.get(fresh, syncCall, 'request')).toEqual({ n: 3 });
  // The running task itself stays, not expired: only what it stored more than the TTL ago went.
  expect(await tasks.getTask(running)).toMatchObject({ snapshot: { status: 'working' } });
  expect(await tasks.getTask(running)).not.toHaveProperty('payloadExpired');
});

test('key rotation: payloads sealed with the old key still open after a new key becomes active', async () => {
  const k1 = generateKey();
  const before = new PayloadStore(db, new Cipher({ activeKeyId: 'r1', keys: { r1: k1 } }));
  const key = taskKeyOf(randomUUID());
  const id = await before.put(key, 'result', { v: 'old' });
  const after = new PayloadStore(db, new Cipher({ activeKeyId: 'r2', keys: { r1: k1, r2: generateKey() } }));
  expect(await after.get(id, key, 'result')).toEqual({ v: 'old' });
  const fresh = await after.put(key, 'result', { v: 'new' });
  expect(await after.get(fresh, key, 'result')).toEqual({ v: 'new' });
  // A keyring that dropped r1 cannot open the old payload: a clear error, not garbage.
  const r2only = new PayloadStore(db, new Cipher({ activeKeyId: 'r2', keys: { r2: generateKey() } }));
  await expect(r2only.get(id, key, 'result')).rejects.toThrow(/No encryption key "r1"/);
});

test('putLatest keeps one row per task, kind and slot: the latest write, still sealed to its task', async () => {
  const key = taskKeyOf(randomUUID());
  const rowsOf = () =>
    db
      .selectFrom('payloads')
      .select(['id', 'created_at', 'ciphertext'])
      .where('task_key', '=', key)
      .where('kind', '=', 'hosted_stream')
      .orderBy('created_at')
      .execute();
  clock = new Date('2026-12-04T00:00:00Z');
  const id = await payloads.putLatest(key, 'hosted_stream', '0', { round: 0, point: MARKER });
  clock = new Date('2026-12-04T00:00:01Z');
  expect(await payloads.putLatest(key, 'hosted_stream', '0', { round: 0, point: 'second' })).toBe(id);
  const rows = await rowsOf();
  expect(rows).toHaveLength(1);
  expect(rows[0]?.created_at).toBe('2026-12-04T00:00:01.000Z');
  expect(Buffer.from(rows[0]?.ciphertext ?? []).includes('second')).toBe(false);
  expect(await payloads.get(id, key, 'hosted_stream')).toEqual({ round: 0, point: 'second' });
  expect(await payloads.get(id, taskKeyOf('other'), 'hosted_stream')).toBeUndefined();
  // A write overtaken by a later one (stamped earlier, arriving last) does not replace it.
  clock = new Date('2026-12-04T00:00:00.500Z');
  await payloads.putLatest(key, 'hosted_stream', '0', { round: 0, point: 'stale' });
  expect(await payloads.allOf(key, 'hosted_stream')).toEqual([{ round: 0, point: 'second' }]);
  // Another slot (the next round) is a row of its own; another task's slot is not this one.
  clock = new Date('2026-12-04T00:00:02Z');
  await payloads.putLatest(key, 'hosted_stream', '1', { round: 1, point: 'next' });
  expect(await payloads.allOf(key, 'hosted_stream')).toEqual([
    { round: 0, point: 'second' },
    { round: 1, point: 'next' },
  ]);
  const other = taskKeyOf(randomUUID());
  expect(await payloads.putLatest(other, 'hosted_stream', '0', { round: 0 })).not.toBe(id);
  expect(await rowsOf()).toHaveLength(2);
});

test('putOnce: of writers racing for one slot exactly one wins and is kept; slots are per task, kind and slot', async () => {
  const key = taskKeyOf(randomUUID());
  // Eight writers at once (on PostgreSQL, on as many pooled connections): one claim lands.
  const won = await Promise.all(
    Array.from({ length: 8 }, (_, attempt) =>
      payloads.putOnce(key, 'hosted_sent', 'round:0', { attempt, round: 0 }),
    ),
  );
  expect(won.filter(Boolean)).toHaveLength(1);
  const winner = won.indexOf(true);
  expect(await payloads.allOf(key, 'hosted_sent')).toEqual([{ attempt: winner, round: 0 }]);
  // Later writers lose too, and leave the winner's value as it was.
  expect(await payloads.putOnce(key, 'hosted_sent', 'round:0', { attempt: 99, round: 0 })).toBe(false);
  expect(await payloads.allOf(key, 'hosted_sent')).toEqual([{ attempt: winner, round: 0 }]);
  // Another slot, another kind and another task are claims of their own.
  expect(await payloads.putOnce(key, 'hosted_sent', 'round:1', { attempt: 1, round: 1 })).toBe(true);
  expect(await payloads.putOnce(key, 'hosted_stream', 'round:0', { round: 0 })).toBe(true);
  expect(await payloads.putOnce(taskKeyOf(randomUUID()), 'hosted_sent', 'round:0', {})).toBe(true);
  expect(await payloads.allOf(key, 'hosted_sent')).toHaveLength(2);
  // Sealed like any payload.
  const raw = await db.selectFrom('payloads').select('ciphertext').where('task_key', '=', key).execute();
  expect(raw.every((r) => !Buffer.from(r.ciphertext).includes('"attempt"'))).toBe(true);
});
