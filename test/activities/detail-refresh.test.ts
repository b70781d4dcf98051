/**
 * A running task's stored detail is refreshed from the upstream before payload retention would remove
 * it (docs/retention.md): the watch reports an unchanged observation as changed once the stored copy is
 * `detailRefreshMs` old, so the workflow stores it again; a younger copy is left alone.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { snapshotKey } from '../../src/store/tasks/snapshot-key';
import { watchActivities, watchInput, workingTask } from './watch-fixture';

const task = workingTask(50);

function watchWith(storedAt: string) {
  const stored: unknown[] = [];
  const activities = watchActivities(() => ({ ...task }), {
    store: {
      detailStoredAt: async () => storedAt,
      watchStarted: async () => {},
      watchDue: async () => {},
    } as never,
    payloads: {
      put: async (_key: string, _kind: string, value: unknown) => {
        stored.push(value);
        return `pl_${stored.length}`;
      },
    } as never,
    settings: {
      minPollIntervalMs: 50,
      maxPollIntervalMs: 60_000,
      maxWatchMs: 500,
      pollFailureBudget: 3,
      detailRefreshMs: 60_000,
    },
  });
  const input = watchInput(task.taskId, snapshotKey({ status: 'working', statusMessage: 'busy' }), 50);
  return { stored, result: new MockActivityEnvironment().run(activities.watchUpstreamTask, input) };
}

test('a stored detail older than detailRefreshMs is stored again, though nothing changed', async () => {
  const { stored, result } = watchWith(new Date(Date.now() - 61_000).toISOString());
  await expect(result).resolves.toMatchObject({
    kind: 'changed',
    observation: { status: 'working', detailRef: 'pl_1' },
  });
  expect(stored).toEqual([expect.objectContaining({ statusMessage: 'busy' })]);
});

test('a younger stored detail is left alone: the watch runs its time and reports nothing', async () => {
  const { stored, result } = watchWith(new Date(Date.now() - 1_000).toISOString());
  await expect(result).resolves.toEqual({ kind: 'unchanged' });
  expect(stored).toEqual([]);
});
