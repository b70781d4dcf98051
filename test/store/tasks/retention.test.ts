/**
 * The task store's retention and project-deletion methods on the database under test: bounded batches,
 * idempotence, running tasks never deleted (only their too-old detail copy goes), payloads dropped while
 * metadata and history stay. The store's clock is the time each write happens in these stories.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { TaskSnapshot } from '../../../src/protocol';
import { Cipher, generateKey } from '../../../src/store/cipher';
import { openDatabase } from '../../../src/store/database';
import type { Database } from '../../../src/store/schema';
import { TaskStore, taskKeyOf } from '../../../src/store/tasks/task-store';
import { testStoreConfig } from '../../helpers/store';
import { newTask } from '../../helpers/task-rows';

let db: Kysely<Database>;
let store: TaskStore;
/** The store's clock: set to the time of each write the story makes. */
let clock = new Date();

beforeAll(async () => {
  db = await openDatabase(await testStoreConfig());
  store = new TaskStore(db, new Cipher({ activeKeyId: 'k1', keys: { k1: generateKey() } }), {
    now: () => clock,
  });
});
afterAll(async () => {
  await db?.destroy();
});

beforeEach(async () => {
  await db.deleteFrom('task_events').execute();
  await db.deleteFrom('tasks').execute();
});

/** A task created at `created`, last written at `updated`, with a result payload when completed. */
async function addTask(opts: {
  project?: string;
  status?: TaskSnapshot['status'];
  created: string;
  updated?: string;
}): Promise<string> {
  const taskKey = taskKeyOf(randomUUID());
  const working: TaskSnapshot = {
    status: 'working',
    createdAt: opts.created,
    lastUpdatedAt: opts.created,
    ttlMs: 60_000,
    inputRequests: { q: { method: 'elicitation/create', params: { message: 'secret question' } } } as never,
  };
  clock = new Date(opts.created);
  await store.insertTask(newTask(taskKey, opts.created, working, { project: opts.project ?? 'prj_a' }));
  const status = opts.status ?? 'completed';
  if (status !== 'working') {
    clock = new Date(opts.updated ?? opts.created);
    await store.recordSnapshot(taskKey, {
      ...working,
      status,
      lastUpdatedAt: opts.updated ?? opts.created,
      inputRequests: undefined as never,
      ...(status === 'completed' && { result: { content: [{ type: 'text', text: 'the result' }] } }),
    });
  }
  return taskKey;
}

const DAY = '2026-01-';

test('purgePayloadsBefore drops payloads of terminal tasks stored before the cutoff, in batches', async () => {
  const old = await Promise.all(
    [1, 2, 3, 4, 5].map((d) => addTask({ created: `${DAY}0${d}T00:00:00.000Z` })),
  );
  const recent = await addTask({ created: `${DAY}20T00:00:00.000Z` });
  const oldRunning = await addTask({ created: `${DAY}01T00:00:00.000Z`, status: 'working' });
  // Created long ago but finished after the cutoff: its payload is young.
  const lateFinish = await addTask({ created: `${DAY}01T00:00:00.000Z`, updated: `${DAY}15T00:00:00.000Z` });

  const cutoff = `${DAY}10T00:00:00.000Z`;
  // Five finished tasks, then the running task's detail copy (it is older than the cutoff too).
  expect(await store.purgePayloadsBefore(cutoff, 2)).toBe(2);
  expect(await store.purgePayloadsBefore(cutoff, 2)).toBe(2);
  expect(await store.purgePayloadsBefore(cutoff, 2)).toBe(2);
  expect(await store.purgePayloadsBefore(cutoff, 2)).toBe(0);

  for (const key of old) {
    const task = await store.getTask(key);
    expect(task).toMatchObject({ payloadExpired: true, snapshot: { status: 'completed' } });
    expect(task?.snapshot).not.toHaveProperty('result');
    expect(await store.listEvents(key)).toHaveLength(2);
    const row = await db
      .selectFrom('tasks')
      .select(['detail', 'payload_expired_at'])
      .where('task_key', '=', key)
      .executeTakeFirstOrThrow();
    expect(row.detail).toBeNull();
    expect(row.payload_expired_at).toEqual(expect.any(String));
  }
  for (const key of [recent, lateFinish]) {
    const task = await store.getTask(key);
    expect(task).toMatchObject({ snapshot: { result: expect.any(Object) } });
    expect(task).not.toHaveProperty('payloadExpired');
  }
  // A running task is not expired, but its detail copy older than the cutoff goes (payloads at most 24 h
  // from storage); the watch stores a fresh one long before that while a worker runs (docs/retention.md).
  expect(await store.getTask(oldRunning)).not.toHaveProperty('payloadExpired');
  expect(await store.getTask(oldRunning)).toMatchObject({ snapshot: { status: 'working' } });
  expect((await store.getTask(oldRunning))?.snapshot).not.toHaveProperty('inputRequests');
});

test('purgeMetadataBefore deletes terminal tasks created before the cutoff with their history', async () => {
  const old = await Promise.all(
    [1, 2, 3].map((d) => addTask({ created: `${DAY}0${d}T00:00:00.000Z`, status: 'failed' })),
  );
  const recent = await addTask({ created: `${DAY}20T00:00:00.000Z` });
  const oldRunning = await addTask({ created: `${DAY}01T00:00:00.000Z`, status: 'working' });

  const cutoff = `${DAY}10T00:00:00.000Z`;
  expect(await store.purgeMetadataBefore(cutoff, 2)).toBe(2);
  expect(await store.purgeMetadataBefore(cutoff, 2)).toBe(1);
  expect(await store.purgeMetadataBefore(cutoff, 2)).toBe(0);
  for (const key of old) {
    expect(await store.getTask(key)).toBeUndefined();
    expect(await store.listEvents(key)).toEqual([]);
  }
  expect(await store.getTask(recent)).toBeDefined();
  expect(await store.getTask(oldRunning)).toBeDefined();
  expect(await store.listEvents(recent)).toHaveLength(2);
});

test('project deletion helpers page through running tasks and delete every task of the project', async () => {
  const running = await Promise.all(
    [1, 2, 3].map(() => addTask({ created: `${DAY}01T00:00:00.000Z`, status: 'working' })),
  );
  const done = await addTask({ created: `${DAY}01T00:00:00.000Z` });
  const other = await addTask({ project: 'prj_b', created: `${DAY}01T00:00:00.000Z`, status: 'working' });

  const first = await store.listActiveProjectTasks('prj_a', '', 2);
  const second = await store.listActiveProjectTasks('prj_a', first.at(-1)!.taskKey, 2);
  expect([...first, ...second].map((t) => t.taskKey).sort()).toEqual([...running].sort());
  expect(second).toHaveLength(1);

  expect(await store.deleteProjectTasks('prj_a', 3)).toBe(3);
  expect(await store.deleteProjectTasks('prj_a', 3)).toBe(1);
  expect(await store.deleteProjectTasks('prj_a', 3)).toBe(0);
  expect(await store.getTask(done)).toBeUndefined();
  expect(await store.getTask(other)).toBeDefined();
});
