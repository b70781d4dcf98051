/**
 * Retention against the `ttlMs` the gateway advertises, and payloads of tasks that run longer than the
 * payload retention (docs/protocol-decisions.md, docs/retention.md), on the database under test with an
 * injected clock (Temporal's time-skipping test server is not available offline, so the days pass here,
 * in the store and retention logic the schedules run).
 *
 * Properties, over generated tasks (fixed seed): no purge ever comes before `createdAt + ttlMs` as the
 * gateway advertised it; the advertised value never exceeds the metadata retention; and after a payload
 * purge nothing stored longer ago than the payload retention is left, running task or not.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { Kysely } from 'kysely';
import type { TaskSnapshot } from '../../../src/protocol';
import { Cipher, generateKey } from '../../../src/store/cipher';
import { openDatabase } from '../../../src/store/database';
import { PayloadStore } from '../../../src/store/tasks/payload-store';
import type { Database } from '../../../src/store/schema';
import { TaskStore, taskKeyOf } from '../../../src/store/tasks/task-store';
import { testStoreConfig } from '../../helpers/store';
import { newTask } from '../../helpers/task-rows';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const RETENTION = { payloadTtlMs: DAY, metadataTtlMs: 90 * DAY };
const T0 = Date.parse('2026-03-01T00:00:00.000Z');
const SEED = 20261203;

let db: Kysely<Database>;
let store: TaskStore;
let payloads: PayloadStore;
let clock = new Date(T0);
const at = (ms: number) => new Date(T0 + ms).toISOString();

beforeAll(async () => {
  db = await openDatabase(await testStoreConfig());
  const cipher = new Cipher({ activeKeyId: 'k1', keys: { k1: generateKey() } });
  store = new TaskStore(db, cipher, { now: () => clock, retention: RETENTION });
  payloads = new PayloadStore(db, cipher, () => clock);
});
afterAll(async () => {
  await db?.destroy();
});
beforeEach(async () => {
  await db.deleteFrom('payloads').execute();
  await db.deleteFrom('task_events').execute();
  await db.deleteFrom('tasks').execute();
});

const QUESTION = {
  ask: {
    method: 'elicitation/create',
    params: { mode: 'form', message: 'Go on?', requestedSchema: { type: 'object', properties: {} } },
  },
};

async function insert(createdMs: number, ttlMs: number | null): Promise<string> {
  const taskKey = taskKeyOf(randomUUID());
  clock = new Date(T0 + createdMs);
  await payloads.put(taskKey, 'request', { arguments: { n: 1 } });
  await store.insertTask(
    newTask(
      taskKey,
      at(createdMs),
      {
        status: 'input_required',
        statusMessage: 'waiting',
        ttlMs,
        inputRequests: QUESTION,
      } as Partial<TaskSnapshot>,
      { project: 'prj' },
    ),
  );
  return taskKey;
}

/** What the watch and the workflow write: a refreshed copy of the same state, or the final result. */
async function write(taskKey: string, atMs: number, createdMs: number, ttlMs: number | null, done: boolean) {
  clock = new Date(T0 + atMs);
  const base = { createdAt: at(createdMs), lastUpdatedAt: at(atMs), ttlMs, statusMessage: 'waiting' };
  const snapshot = done
    ? { ...base, status: 'completed', result: { content: [{ type: 'text', text: 'done' }] } }
    : { ...base, status: 'input_required', inputRequests: QUESTION };
  await store.recordSnapshot(taskKey, snapshot as TaskSnapshot);
}

/** Both schedules' runs at `nowMs`, as the retention workflow computes their cutoffs. */
async function purgeAt(nowMs: number): Promise<void> {
  clock = new Date(T0 + nowMs);
  while ((await store.purgePayloadsBefore(at(nowMs - RETENTION.payloadTtlMs), 100)) === 100);
  while ((await store.purgeMetadataBefore(at(nowMs - RETENTION.metadataTtlMs), 100)) === 100);
}

test('a task still running after 24 h: arguments gone, current detail refreshed, result kept 24 h from its arrival', async () => {
  const key = await insert(0, null);
  // The watch refreshes the stored detail at half the payload retention.
  await write(key, 13 * HOUR, 0, null, false);
  await purgeAt(25 * HOUR);
  expect(await payloads.firstOf(key, 'request')).toBeUndefined();
  const running = await store.getTask(key);
  expect(running).not.toHaveProperty('payloadExpired');
  expect(running?.snapshot).toMatchObject({ status: 'input_required', inputRequests: QUESTION });
  // Unlimited upstream TTL: the gateway advertises what it keeps, the metadata retention.
  expect(running?.snapshot.ttlMs).toBe(RETENTION.metadataTtlMs);

  // No worker refreshed it for a day: the copy goes, the task and its status stay.
  await purgeAt(38 * HOUR);
  const stale = await store.getTask(key);
  expect(stale).not.toHaveProperty('payloadExpired');
  expect(stale?.snapshot).toMatchObject({ status: 'input_required', statusMessage: 'waiting' });
  expect(stale?.snapshot).not.toHaveProperty('inputRequests');

  // It completes on day three: the result is kept 24 h from then, and the advertised TTL says so.
  await write(key, 60 * HOUR, 0, null, true);
  const done = await store.getTask(key);
  expect(done?.snapshot.ttlMs).toBe(84 * HOUR);
  await purgeAt(83 * HOUR);
  expect((await store.getTask(key))?.snapshot).toMatchObject({
    status: 'completed',
    result: expect.any(Object),
  });
  await purgeAt(85 * HOUR);
  expect(await store.getTask(key)).toMatchObject({ payloadExpired: true, snapshot: { status: 'completed' } });
});

test('an upstream TTL beyond the metadata retention: the 90-day rule wins and the advertised TTL says so', async () => {
  const key = await insert(0, 200 * DAY);
  await write(key, HOUR, 0, 200 * DAY, true);
  expect((await store.getTask(key))?.snapshot.ttlMs).toBe(HOUR + DAY);
  const running = await insert(0, 200 * DAY);
  expect((await store.getTask(running))?.snapshot.ttlMs).toBe(90 * DAY);
  await purgeAt(91 * DAY);
  expect(await store.getTask(key)).toBeUndefined();
  // Running tasks are never purged; the upstream's own TTL ends them.
  expect(await store.getTask(running)).toBeDefined();
});

/** One generated task: when it was created, its upstream TTL, and when (if ever) it finished. */
const taskArb = fc.record({
  createdMs: fc.integer({ min: 0, max: 120 * DAY }),
  ttlMs: fc.option(fc.integer({ min: 1, max: 400 * DAY }), { nil: null }),
  finishedAfterMs: fc.option(fc.integer({ min: 0, max: 100 * DAY }), { nil: null }),
  refreshedAfterMs: fc.option(fc.integer({ min: 0, max: 100 * DAY }), { nil: null }),
});

test('properties: no purge before the advertised createdAt + ttlMs; nothing older than the payload TTL left', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(taskArb, { minLength: 1, maxLength: 5 }),
      fc.integer({ min: 0, max: 250 * DAY }),
      async (tasks, nowOffset) => {
        await db.deleteFrom('payloads').execute();
        await db.deleteFrom('task_events').execute();
        await db.deleteFrom('tasks').execute();
        const now = Math.max(...tasks.map((t) => t.createdMs)) + nowOffset;
        const written: Array<{ key: string; advertisedEnd: number; terminal: boolean }> = [];
        for (const t of tasks) {
          const key = await insert(t.createdMs, t.ttlMs);
          // Writes that happened before "now": a refresh of the running task, then perhaps its end.
          const refresh = t.refreshedAfterMs === null ? null : t.createdMs + t.refreshedAfterMs;
          const finish = t.finishedAfterMs === null ? null : t.createdMs + t.finishedAfterMs;
          if (refresh !== null && refresh <= now && (finish === null || refresh < finish))
            await write(key, refresh, t.createdMs, t.ttlMs, false);
          if (finish !== null && finish <= now) await write(key, finish, t.createdMs, t.ttlMs, true);
          const advertised = (await store.getTask(key))?.snapshot.ttlMs;
          // Never unlimited, never beyond the metadata retention.
          expect(advertised).toEqual(expect.any(Number));
          expect(advertised).toBeLessThanOrEqual(RETENTION.metadataTtlMs);
          written.push({
            key,
            advertisedEnd: t.createdMs + (advertised as number),
            terminal: finish !== null && finish <= now,
          });
        }
        await purgeAt(now);
        for (const w of written) {
          const task = await store.getTask(w.key);
          // Within its advertised lifetime a task is there and, finished, still has its outcome.
          if (w.advertisedEnd > now) {
            expect(task).toBeDefined();
            expect(task).not.toHaveProperty('payloadExpired');
          }
          if (!w.terminal) expect(task).toBeDefined();
        }
        // Nothing stored longer ago than the payload retention is left.
        const cutoff = at(now - RETENTION.payloadTtlMs);
        const oldPayloads = await db
          .selectFrom('payloads')
          .select('id')
          .where('created_at', '<', cutoff)
          .execute();
        expect(oldPayloads).toEqual([]);
        const oldDetails = await db
          .selectFrom('tasks')
          .select('task_key')
          .where('detail', 'is not', null)
          .where('detail_stored_at', '<', cutoff)
          .execute();
        expect(oldDetails).toEqual([]);
      },
    ),
    { seed: SEED, numRuns: 40 },
  );
});
