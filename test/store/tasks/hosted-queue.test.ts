/**
 * The hosted calls' queue (store/tasks/hosted-queue.ts) on the database under test: slots in arrival order,
 * positions, slots given back (naming the waiting calls to wake) or lent while the upstream asks, the
 * holders listed, and a slot whose task ended without giving it back freed.
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

test('a slot given back names the calls to wake: as many as are free and a few more, first in line first', async () => {
  const upstream = `up-${randomUUID()}`;
  const keys: string[] = [];
  for (let i = 0; i < 10; i++) keys.push(await runningTask());
  for (const key of keys) {
    tick();
    await queue.acquire(key, upstream, 2);
  }
  const workflowOf = (key: string) => `task-${key.slice(0, 32)}`;
  expect(await queue.holders(upstream)).toEqual(
    expect.arrayContaining(keys.slice(0, 2).map((k) => ({ taskKey: k, workflowId: workflowOf(k) }))),
  );
  // One slot free after this: the first waiting and five more (places moved up), in line order.
  expect(await queue.giveBack(keys[0] as string, upstream, 2)).toEqual(keys.slice(2, 8).map(workflowOf));
  expect((await queue.holders(upstream)).map((h) => h.taskKey)).toEqual([keys[1]]);
});

test('a slot lent while the upstream asks goes to the next call, and the asking call runs first again', async () => {
  const upstream = `up-${randomUUID()}`;
  const [a, b, c] = [await runningTask(), await runningTask(), await runningTask()];
  for (const key of [a, b, c]) {
    tick();
    await queue.acquire(key, upstream, 1);
  }
  expect(await queue.giveBack(a, upstream, 1, true)).toContain(`task-${b.slice(0, 32)}`);
  expect(await queue.acquire(b, upstream, 1)).toEqual({ running: true });
  // Answered while b runs: a waits, ahead of c, which arrived after it.
  expect(await queue.acquire(a, upstream, 1)).toEqual({ running: false, position: 1 });
  expect(await queue.acquire(c, upstream, 1)).toEqual({ running: false, position: 2 });
  await queue.giveBack(b, upstream, 1);
  expect(await queue.acquire(c, upstream, 1)).toEqual({ running: false, position: 2 });
  expect(await queue.acquire(a, upstream, 1)).toEqual({ running: true });
  // Asking again: the slot goes to c, which waits for nothing else.
  expect(await queue.giveBack(a, upstream, 1, true)).toEqual([`task-${c.slice(0, 32)}`]);
  expect(await queue.acquire(c, upstream, 1)).toEqual({ running: true });
});

test('suspects: waiting calls silent since a time, first in line first; never a running or asking one', async () => {
  const upstream = `up-${randomUUID()}`;
  const [holder, silent, asking, lively] = [
    await runningTask(),
    await runningTask(),
    await runningTask(),
    await runningTask(),
  ];
  for (const key of [holder, silent, asking, lively]) {
    tick();
    await queue.acquire(key, upstream, 1);
  }
  await queue.giveBack(asking, upstream, 1, true);
  const silentSince = clock.toISOString();
  // Ten minutes on, only `lively` looked again.
  clock = new Date(clock.getTime() + 10 * 60_000);
  await queue.acquire(lively, upstream, 1);
  const before = new Date(clock.getTime() - 5 * 60_000).toISOString();
  expect(silentSince < before).toBe(true);
  expect((await queue.suspects(upstream, before, 5)).map((s) => s.taskKey)).toEqual([silent]);
  expect(await queue.suspects(upstream, before, 0)).toEqual([]);
});
