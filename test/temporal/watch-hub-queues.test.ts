/**
 * The watch hub's per-upstream due queues (src/temporal/watch-hub-queues.ts): soonest due first, nothing
 * before it is due, entries no longer current dropped on the way, each upstream's most overdue entry;
 * which held tasks are late, or caught up.
 */
import type { WatchUpstreamTaskResult } from '../../src/activities/types';
import type { TaskStatus } from '../../src/protocol';
import type { HeldWatch } from '../../src/temporal/watch-hub-queues';
import {
  DueQueues,
  heldOf,
  lateness,
  pollOnAfter,
  retryAfterFailure,
} from '../../src/temporal/watch-hub-queues';
import { CREATED_ENLISTMENT } from '../../src/workflows/messages';

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

describe('pollOnAfter', () => {
  const held = (generation: string): HeldWatch =>
    ({
      group: 'p/u',
      nextAt: 0,
      row: {
        taskKey: 't',
        workflowId: 'w',
        project: 'p',
        upstream: 'u',
        generation,
        watch: {},
        pollIntervalMs: 1000,
        leaseUntil: '',
      },
      input: { taskKey: 't', knownKey: 'before', pollIntervalMs: 1000 },
      polling: false,
      outcome: { kind: 'expired' },
      answeredAt: 'then',
    }) as unknown as HeldWatch;
  const changed = (status: TaskStatus): WatchUpstreamTaskResult =>
    ({
      kind: 'changed',
      observation: {
        status,
        createdAt: '',
        lastUpdatedAt: '',
        ttlMs: null,
        key: 'after',
        pollIntervalMs: 5000,
      },
    }) as const;

  test("the API's enlistment of a new task is polled on while it stays working, from what was told", () => {
    const h = held(CREATED_ENLISTMENT);
    const before = Date.now();
    expect(pollOnAfter(h, changed('working'))).toBe(true);
    expect(h.input.knownKey).toBe('after');
    expect(h.outcome).toBeUndefined();
    expect(h.answeredAt).toBeUndefined();
    expect(h.nextAt).toBeGreaterThanOrEqual(before + 5000);
  });

  test('polled on, a task once marked late is not caught up: the mark of the change told stands', () => {
    const h = held(CREATED_ENLISTMENT);
    h.markedLate = true;
    expect(pollOnAfter(h, changed('working'))).toBe(true);
    // On time again, yet its workflow has still to record what the hub told it: no caught-up clearing.
    expect(lateness([h], Date.now()).caughtUp).toEqual([]);
  });

  test('polled on, a task whose polls then run late and catch up leaves the mark of the change told as it is', () => {
    const h = held(CREATED_ENLISTMENT);
    expect(pollOnAfter(h, changed('working'))).toBe(true);
    // Late: marking it due since its poll was due would move the earlier mark later.
    const late = h.nextAt + 3 * 5000;
    expect(lateness([h], late)).toEqual({ late: [], caughtUp: [] });
    // Marked late before it was told (the mark then stood for both): catching up clears nothing either.
    h.markedLate = true;
    expect(lateness([h], h.nextAt)).toEqual({ late: [], caughtUp: [] });
  });

  test('any other change, or any enlistment of the workflow, is left to the workflow', () => {
    expect(pollOnAfter(held(CREATED_ENLISTMENT), changed('input_required'))).toBe(false);
    expect(pollOnAfter(held(CREATED_ENLISTMENT), changed('completed'))).toBe(false);
    expect(pollOnAfter(held(CREATED_ENLISTMENT), { kind: 'expired' })).toBe(false);
    const own = held('run/1');
    expect(pollOnAfter(own, changed('working'))).toBe(false);
    expect(own.input.knownKey).toBe('before');
  });
});

test('late: a held task two intervals overdue; caught up: a marked one no longer late; neither while polled or delivering', () => {
  const now = 100_000;
  const row = (taskKey: string) => ({
    taskKey,
    workflowId: `wf-${taskKey}`,
    project: 'p',
    upstream: 'u',
    generation: 'run/1',
    watch: { taskKey, pollIntervalMs: 1000 },
    pollIntervalMs: 1000,
    leaseUntil: '',
  });
  const at = (taskKey: string, nextAt: number, more: Partial<HeldWatch> = {}) =>
    Object.assign(heldOf(row(taskKey), now), { nextAt }, more);
  const overdue = now - 2001; // two intervals of 1 s, at least 2 s
  const held = [
    at('late', overdue),
    at('still-marked', overdue, { markedLate: true }),
    at('caught-up', now, { markedLate: true }),
    at('on-time', now),
    at('polling', overdue, { polling: true }),
    // Its change is being delivered again (the signal failed): the mark its delivery set must stand.
    at('delivering', now + 1000, { markedLate: true, outcome: { kind: 'expired' } }),
  ];
  const { late, caughtUp } = lateness(held, now);
  expect(late.map((h) => h.row.taskKey)).toEqual(['late']);
  expect(caughtUp.map((h) => h.row.taskKey)).toEqual(['caught-up']);
});

test("a failed round waits longer with each failure in a row, up to 30 s, and never less than the task's poll interval when it asks the upstream again", () => {
  const now = 1_000_000;
  const row = {
    taskKey: 't',
    workflowId: 'wf-t',
    project: 'p',
    upstream: 'u',
    generation: 'run/1',
    watch: { taskKey: 't', pollIntervalMs: 5000 },
    pollIntervalMs: 5000,
    leaseUntil: '',
  };
  // Its outcome is kept (the signal failed): only Temporal and the store are asked again.
  const delivering = Object.assign(heldOf(row, now), { outcome: { kind: 'expired' } as const });
  const waits = Array.from({ length: 8 }, () => {
    retryAfterFailure(delivering, 1000, now);
    return delivering.nextAt - now;
  });
  expect(waits).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
  expect(delivering.failures).toBe(8);
  // Nothing kept (a store write after the poll failed): the retry polls the upstream again.
  const polling = heldOf(row, now);
  retryAfterFailure(polling, 1000, now);
  expect(polling.nextAt - now).toBe(5000);
  for (let i = 0; i < 4; i++) retryAfterFailure(polling, 1000, now);
  expect(polling.nextAt - now).toBe(16_000);
  // The upstream has since asked for 30 s between polls: that is the floor now.
  const slowed = Object.assign(heldOf(row, now), { intervalMs: 30_000 });
  retryAfterFailure(slowed, 1000, now);
  expect(slowed.nextAt - now).toBe(30_000);
});
