/**
 * A watch activity on a worker that starts to shut down ends as `unchanged` within about a second, so
 * the workflow schedules its next watch elsewhere instead of the worker waiting out its grace time.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { snapshotKey } from '../../src/store/tasks/snapshot-key';
import { watchActivities, watchInput, workingTask } from './watch-fixture';

const task = workingTask(200);

test('a watch returns unchanged once the worker is stopping', async () => {
  let polls = 0;
  const stopping = new AbortController();
  const activities = watchActivities(
    () => {
      polls++;
      return { ...task };
    },
    {
      store: { watchStarted: async () => {}, watchDue: async () => {} } as never,
      payloads: {} as never,
      settings: {
        minPollIntervalMs: 50,
        maxPollIntervalMs: 60_000,
        maxWatchMs: 600_000,
        pollFailureBudget: 3,
      },
      stopping: stopping.signal,
    },
  );
  const input = watchInput(task.taskId, snapshotKey({ status: 'working', statusMessage: 'busy' }), 200);
  const watching = new MockActivityEnvironment().run(activities.watchUpstreamTask, input);
  while (polls < 3) await new Promise((r) => setTimeout(r, 20));
  stopping.abort();
  await expect(watching).resolves.toEqual({ kind: 'unchanged' });
});
