/**
 * A change the watch stored is recorded without reading it back (src/activities/recent-details.ts): the
 * watch stores the new detail, the workflow's next step records it from what the same process kept, and
 * the payload store is read only for a detail this process did not store (or no longer keeps). The watch
 * hub's poll shares the activities' details when the worker role gives both the same instance.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../../src/activities';
import { RecentDetails } from '../../src/activities/recent-details';
import { createWatchPoll } from '../../src/activities/watch-poll';
import { watchActivities, watchDeps, watchInput } from './watch-fixture';

/** A task store and payload store recording what is recorded and read; `extra` adds to the task store. */
function recordingStores(now: string, extra: Record<string, unknown> = {}) {
  const stored = new Map<string, unknown>();
  const reads: string[] = [];
  const recorded: unknown[] = [];
  const store = {
    detailStoredAt: async () => now,
    recordSnapshot: async (_key: string, snapshot: unknown) => {
      recorded.push(snapshot);
      return true;
    },
    ...extra,
  } as never;
  const payloads = {
    put: async (_key: string, _kind: string, value: unknown) => {
      const id = `pl_${stored.size + 1}`;
      stored.set(id, value);
      return id;
    },
    get: async (id: string) => {
      reads.push(id);
      return stored.get(id);
    },
  } as never;
  return { store, payloads, reads, recorded };
}

const SETTINGS = { minPollIntervalMs: 50, maxPollIntervalMs: 60_000, maxWatchMs: 500, pollFailureBudget: 3 };

test('each detail is taken once; an unknown one is not there', () => {
  const recent = new RecentDetails();
  recent.remember('pl_1', { statusMessage: 'a' });
  expect(recent.take('pl_1')).toEqual({ statusMessage: 'a' });
  expect(recent.take('pl_1')).toBeUndefined();
  expect(recent.take('pl_2')).toBeUndefined();
});

test('a detail larger than the whole bound is not kept', () => {
  const recent = new RecentDetails();
  recent.remember('pl_big', { statusMessage: 'x'.repeat(17 * 1024 * 1024) });
  expect(recent.take('pl_big')).toBeUndefined();
});

test('the watch stores a change and the snapshot is recorded without reading the payload store', async () => {
  const now = new Date().toISOString();
  const { store, payloads, reads, recorded } = recordingStores(now, {
    watchStarted: async () => {},
    watchDue: async () => {},
  });
  const activities = watchActivities(
    () => ({
      taskId: 't1',
      status: 'working',
      statusMessage: 'step 2',
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs: null,
    }),
    { store, payloads, settings: SETTINGS },
  );
  const env = new MockActivityEnvironment();
  const watched = await env.run(activities.watchUpstreamTask, watchInput('t1', 'working-before', 50));
  expect(watched).toMatchObject({ kind: 'changed', observation: { status: 'working' } });
  const observation = (watched as { observation: never }).observation;
  await env.run(activities.recordTaskSnapshot, { taskKey: 'task-key', observation, project: 'p1' });
  expect(recorded).toEqual([expect.objectContaining({ statusMessage: 'step 2' })]);
  expect(reads).toEqual([]);
  // Recorded again (a retried step): read from the store this time, the same detail.
  await env.run(activities.recordTaskSnapshot, { taskKey: 'task-key', observation, project: 'p1' });
  expect(reads).toHaveLength(1);
  expect(recorded[1]).toEqual(recorded[0]);
});

test("a change the watch hub stored is recorded by the workflow's step without reading it back, when both share the process's details", async () => {
  const now = new Date().toISOString();
  const { store, payloads, reads, recorded } = recordingStores(now);
  const deps = {
    store,
    payloads,
    settings: SETTINGS,
    // As the worker role builds them: one instance for the activities and the hub's poll.
    recentDetails: new RecentDetails(),
  };
  const answer = () => ({
    taskId: 't1',
    status: 'working',
    statusMessage: 'seen by the hub',
    createdAt: now,
    lastUpdatedAt: now,
    ttlMs: null,
  });
  const full = watchDeps(answer, deps);
  const activities = createActivities(full);
  // The hub's poll: the same step the activities use, over the same deps, as the worker role builds it.
  const hubPoll = createWatchPoll(full, deps.recentDetails);
  const input = watchInput('t1', 'working-before', 50);
  const step = await hubPoll.pollOnce(input, await hubPoll.startCursor(input), new AbortController().signal);
  if (!('done' in step) || step.done.kind !== 'changed') throw new Error('the hub saw no change');
  const observation = step.done.observation;
  await new MockActivityEnvironment().run(activities.recordTaskSnapshot, {
    taskKey: 'task-key',
    observation,
    project: 'p1',
  });
  expect(recorded).toEqual([expect.objectContaining({ statusMessage: 'seen by the hub' })]);
  expect(reads).toEqual([]);
});
