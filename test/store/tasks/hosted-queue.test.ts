/**
 * The hosted calls' queue (store/tasks/hosted-queue.ts) on the database under test: slots in arrival order,
 * positions, slots given back, and a slot whose task ended without giving it back freed.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { Cipher, generateKey } from '../../../src/store/cipher';
import { openDatabase } from '../../../src/store/database';
import { HostedQueue } from '../../../src/store/tasks/hosted-queue';
import type { Database } from '../../../src/store/schema';
import { TaskStore, taskKeyOf } from '../../../src/store/tasks/task-store';
import { testStoreConfig } from '../../helpers/store';
import { newTask } from '../../helpers/task-rows';

let db: Kysely<Database>;
let tasks: TaskStore;
let queue: HostedQueue;
let clock = new Date('2026-12-05T00:00:00Z');
const tick = () => (clock = new Date(clock.getTime() + 1000));

beforeAll(async () => {
  db = await openDatabase(await testStoreConfig());
  tasks = new TaskStore(db, new Cipher({ activeKeyId: 'k1', keys: { k1: generateKey() } }), {
    now: () => clock,
  });
  queue = new HostedQueue(db, () => clock);
});
afterAll(async () => {
  await db?.destroy();
});

async function runningTask(): Promise<string> {
  const key = taskKeyOf(randomUUID());
  const at = clock.toISOString();
  await tasks.insertTask(newTask(key, at));
  return key;
}

test('two slots: the first two run, the others wait in arrival order and move up', async () => {
  const upstream = `up-${randomUUID()}`;
  const [a, b, c, d] = [await runningTask(), await runningTask(), await runningTask(), await runningTask()];
  const take = async (key: string) => {
    tick();
    return queue.acquire(key, upstream, 2);
  };
  expect(await take(a)).toEqual({ running: true });
  expect(await take(b)).toEqual({ running: true });
  expect(await take(c)).toEqual({ running: false, position: 1 });
  expect(await take(d)).toEqual({ running: false, position: 2 });
  // Asking again changes nothing: a call keeps its place and its slot.
  expect(await take(a)).toEqual({ running: true });
  expect(await take(d)).toEqual({ running: false, position: 2 });

  await queue.release(a);
  // d looks first, but c arrived before it: c's turn.
  expect(await take(d)).toEqual({ running: false, position: 2 });
  expect(await take(c)).toEqual({ running: true });
  expect(await take(d)).toEqual({ running: false, position: 1 });

  // b's task ended without giving its slot back (its workflow was terminated): the slot is freed.
  const at = clock.toISOString();
  await tasks.recordSnapshot(b, { status: 'cancelled', createdAt: at, lastUpdatedAt: at, ttlMs: null });
  expect(await take(d)).toEqual({ running: true });
});

test('queues of different upstreams do not share slots', async () => {
  const [x, y] = [await runningTask(), await runningTask()];
  expect(await queue.acquire(x, `up-${randomUUID()}`, 1)).toEqual({ running: true });
  expect(await queue.acquire(y, `up-${randomUUID()}`, 1)).toEqual({ running: true });
});
