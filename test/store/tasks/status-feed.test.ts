/**
 * The feed of task status changes behind the listen streams' pushes, on the database under test: it
 * reads what was written since it started, and a row whose id it passed over while the row's transaction
 * had not committed (PostgreSQL takes an identity value at insert, not at commit) is read when it
 * appears, not lost behind the cursor. A missing id is given up after GAP_WINDOW_MS (a rollback). Rows
 * written at an id taken and freed before (inserted, deleted, inserted again at that id) stand in for a
 * late commit on both databases; on PostgreSQL a real held transaction shows it too.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { Cipher, generateKey } from '../../../src/store/cipher';
import { openDatabase } from '../../../src/store/database';
import type { Database } from '../../../src/store/schema';
import { GAP_WINDOW_MS, StatusEventFeed } from '../../../src/store/tasks/status-feed';
import { TaskStore, taskKeyOf } from '../../../src/store/tasks/task-store';
import { testDatabase, testStoreConfig } from '../../helpers/store';
import { newTask } from '../../helpers/task-rows';

let db: Kysely<Database>;
let tasks: TaskStore;
let clock = Date.parse('2026-12-06T00:00:00Z');

beforeAll(async () => {
  db = await openDatabase(await testStoreConfig());
  tasks = new TaskStore(db, new Cipher({ activeKeyId: 'k1', keys: { k1: generateKey() } }));
});
afterAll(async () => {
  await db?.destroy();
});

async function newTaskKey(): Promise<string> {
  const key = taskKeyOf(randomUUID());
  await tasks.insertTask(newTask(key, new Date(clock).toISOString(), {}, { project: 'p', upstream: 'u' }));
  return key;
}

/** A history row for `taskKey` (at `id` when given), answering its id. */
async function historyRow(
  taskKey: string,
  opts: { id?: number; kind?: string; on?: Kysely<Database> } = {},
): Promise<number> {
  const row = await (opts.on ?? db)
    .insertInto('task_events')
    .values({
      ...(opts.id !== undefined && { id: opts.id }),
      task_key: taskKey,
      at: new Date(clock).toISOString(),
      kind: opts.kind ?? 'status',
      status: 'working',
      status_message: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

/** An id taken by an insert and not readable (as a transaction that has not committed holds it). */
async function takenId(taskKey: string): Promise<number> {
  const id = await historyRow(taskKey);
  await db.deleteFrom('task_events').where('id', '=', id).execute();
  return id;
}

const feedNow = () => new StatusEventFeed(db, () => clock);

test('reads the status rows written after it started, oldest first, and no other kind', async () => {
  const a = await newTaskKey(); // its creation writes a status row: before the feed, not read
  const feed = feedNow();
  await feed.start();
  const b = await newTaskKey();
  await historyRow(a, { kind: 'assignment' });
  const third = await historyRow(a);
  const events = await feed.read();
  expect(events.map((e) => e.taskKey)).toEqual([b, a]);
  expect(events[1]?.id).toBe(third);
  expect(feed.behind).toBe(false);
  expect(await feed.read()).toEqual([]);
  // A read that stops at its limit says more are waiting (the feed then reads on without a pause).
  await historyRow(a);
  await historyRow(b);
  expect(await feed.read(1)).toHaveLength(1);
  expect(feed.behind).toBe(true);
  expect(await feed.read(1)).toHaveLength(1);
  expect(await feed.read(1)).toHaveLength(0);
  expect(feed.behind).toBe(false);
});

test('a row that appears below one already read (its transaction committed later) is still read', async () => {
  const a = await newTaskKey();
  const b = await newTaskKey();
  const feed = feedNow();
  await feed.start();
  // The id a's row will have, taken and not yet readable, and written at that id below.
  const pending = await takenId(a);
  await historyRow(b);
  expect((await feed.read()).map((e) => e.taskKey)).toEqual([b]);
  expect(feed.missing()).toContain(pending);
  await historyRow(a, { id: pending });
  expect(await feed.read()).toEqual([{ id: pending, taskKey: a }]);
  expect(feed.missing()).not.toContain(pending);
});

test('a feed that starts while ids just below the newest are missing looks for them', async () => {
  const a = await newTaskKey();
  const pending = await takenId(a);
  await historyRow(a);
  const feed = feedNow();
  await feed.start();
  expect(feed.missing()).toContain(pending);
  await historyRow(a, { id: pending });
  expect(await feed.read()).toEqual([{ id: pending, taskKey: a }]);
});

test('a missing id (a rolled-back insert, a deleted row) is given up after the window', async () => {
  const a = await newTaskKey();
  const feed = feedNow();
  await feed.start();
  const gone = await takenId(a);
  await historyRow(a);
  expect(await feed.read()).toHaveLength(1);
  expect(feed.missing()).toContain(gone);
  clock += GAP_WINDOW_MS / 2;
  expect(await feed.read()).toEqual([]);
  expect(feed.missing()).toContain(gone);
  clock += GAP_WINDOW_MS;
  expect(await feed.read()).toEqual([]);
  expect(feed.missing()).toEqual([]);
});

if (testDatabase() === 'postgres') {
  test('PostgreSQL: a transaction that commits after a later one was read is read once it commits', async () => {
    const a = await newTaskKey();
    const b = await newTaskKey();
    const feed = feedNow();
    await feed.start();
    let commit!: () => void;
    const held = new Promise<void>((r) => (commit = r));
    let inserted!: () => void;
    const insertedYet = new Promise<void>((r) => (inserted = r));
    const slow = db.transaction().execute(async (trx) => {
      await historyRow(a, { on: trx });
      inserted();
      await held;
    });
    try {
      await insertedYet;
      await historyRow(b); // a higher id, committed first
      expect((await feed.read()).map((e) => e.taskKey)).toEqual([b]);
    } finally {
      commit();
      await slow;
    }
    expect((await feed.read()).map((e) => e.taskKey)).toEqual([a]);
  });
}

// Last: it moves the ids far ahead.
test('a jump of ids keeps the missing ids just below the new row, at most 1,000', async () => {
  const a = await newTaskKey();
  const feed = feedNow();
  await feed.start();
  const before = await historyRow(a);
  const far = await historyRow(a, { id: before + 5_000 });
  expect(await feed.read()).toHaveLength(2);
  const missing = feed.missing();
  expect(missing.length).toBeLessThanOrEqual(1_000);
  expect(missing).toContain(far - 1);
  expect(missing).not.toContain(before + 1);
});
