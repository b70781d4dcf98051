/**
 * Sessions with 2025-era upstreams on the database under test: one per scope (the first stored wins),
 * the session id never in plaintext and bound to its scope, replaced only if still the failing one, and
 * kept at shutdown while pinned by upstream tasks.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { LegacySessionRecord } from '../../../src/protocol';
import { Cipher, generateKey } from '../../../src/store/cipher';
import { openDatabase } from '../../../src/store/database';
import type { Database } from '../../../src/store/schema';
import { UpstreamSessionStore } from '../../../src/store/sessions/upstream-sessions';
import { testStoreConfig } from '../../helpers/store';

let db: Kysely<Database>;
let sessions: UpstreamSessionStore;
let clock = new Date('2026-12-01T00:00:00Z');
const SECRET_SESSION = `sess-${randomUUID()}`;

beforeAll(async () => {
  db = await openDatabase(await testStoreConfig());
  sessions = new UpstreamSessionStore(
    db,
    new Cipher({ activeKeyId: 'k1', keys: { k1: generateKey() } }),
    () => clock,
  );
});
afterAll(async () => {
  await db?.destroy();
});

function record(nonce: string, sessionId: string | null = SECRET_SESSION): LegacySessionRecord {
  return {
    nonce,
    url: 'http://127.0.0.1:9/mcp',
    upstreamId: 'ups_1',
    protocolVersion: '2025-11-25',
    sessionId,
    initialize: {
      protocolVersion: '2025-11-25',
      capabilities: { tools: {} },
      serverInfo: { name: 'u', version: '1' },
    },
  };
}

test('the first session stored for a scope wins; its id is sealed and bound to the scope', async () => {
  const scope = `ups_1#none|plain-${randomUUID()}`;
  expect(await sessions.add(scope, record('n1'))).toEqual(record('n1'));
  expect((await sessions.add(scope, record('n2', 'other'))).nonce).toBe('n1');
  expect(await sessions.get(scope)).toEqual(record('n1'));
  const row = await db
    .selectFrom('upstream_sessions')
    .selectAll()
    .where('scope', '=', scope)
    .executeTakeFirstOrThrow();
  expect(Buffer.from(row.state).includes(SECRET_SESSION)).toBe(false);
  // Moved to another scope, the sealed state does not open.
  await db
    .insertInto('upstream_sessions')
    .values({ ...row, scope: `${scope}-copy` })
    .execute();
  await expect(sessions.get(`${scope}-copy`)).rejects.toThrow();
});

test('a session is removed only if it is still the one named', async () => {
  const scope = `ups_2#none|form-${randomUUID()}`;
  await sessions.add(scope, record('old'));
  await sessions.remove(scope, 'someone-else');
  expect((await sessions.get(scope))?.nonce).toBe('old');
  await sessions.remove(scope, 'old');
  expect(await sessions.get(scope)).toBeUndefined();
  expect((await sessions.add(scope, record('new', null))).sessionId).toBeNull();
});

test('a pinned session is kept at shutdown until its pin passes', async () => {
  const scope = `ups_3#none|plain-${randomUUID()}`;
  await sessions.add(scope, record('p'));
  await sessions.pin(scope, 'p', '2026-12-01T00:05:00.000Z');
  await sessions.pin(scope, 'p', '2026-12-01T00:01:00.000Z'); // an earlier pin does not shorten it
  expect(await sessions.release(scope, 'p')).toBe(false);
  clock = new Date('2026-12-01T00:06:00Z');
  expect(await sessions.release(scope, 'other')).toBe(false);
  expect(await sessions.release(scope, 'p')).toBe(true);
  expect(await sessions.get(scope)).toBeUndefined();
});
