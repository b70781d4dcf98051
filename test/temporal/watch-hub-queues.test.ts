/**
 * The watch hub's per-upstream due queues (src/temporal/watch-hub-queues.ts): soonest due first, nothing
 * before it is due, entries no longer current dropped on the way, each upstream's most overdue entry.
 */
import { DueQueues } from '../../src/temporal/watch-hub-queues';

interface Item {
  name: string;
  group: string;
  nextAt: number;
  gone?: boolean;
}

const item = (name: string, group: string, nextAt: number): Item => ({ name, group, nextAt });

test("takes an upstream's entries soonest due first, and none before it is due", () => {
  const queues = new DueQueues<Item>((i) => !i.gone);
  for (const i of [item('c', 'u', 30), item('a', 'u', 10), item('b', 'u', 20), item('x', 'v', 5)])
    queues.push(i);
  expect(queues.take('u', 25)?.name).toBe('a');
  expect(queues.take('u', 25)?.name).toBe('b');
  expect(queues.take('u', 25)).toBeUndefined();
  expect(queues.take('u', 30)?.name).toBe('c');
  expect(queues.take('v', 100)?.name).toBe('x');
  expect(queues.take('nobody', 100)).toBeUndefined();
});

test('drops entries no longer current, and forgets an upstream whose queue ran empty', () => {
  const queues = new DueQueues<Item>((i) => !i.gone);
  const first = item('first', 'u', 1);
  queues.push(first);
  queues.push(item('second', 'u', 2));
  first.gone = true;
  expect(queues.take('u', 10)?.name).toBe('second');
  expect(queues.groups()).toEqual(['u']);
  expect(queues.take('u', 10)).toBeUndefined();
  expect(queues.groups()).toEqual([]);
});

test("each upstream's most overdue current entry, left queued", () => {
  const queues = new DueQueues<Item>((i) => !i.gone);
  const stale = item('stale', 'u', 0);
  stale.gone = true;
  for (const i of [stale, item('u2', 'u', 7), item('u1', 'u', 3), item('v1', 'v', 9)]) queues.push(i);
  expect(
    queues
      .oldest()
      .map((i) => i.name)
      .sort(),
  ).toEqual(['u1', 'v1']);
  expect(queues.take('u', 100)?.name).toBe('u1');
});
