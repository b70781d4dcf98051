/**
 * Tasks outlive the processes that started them, and a long task's history stays bounded.
 */
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { longTaskCompletes } from '../helpers/task-steps';
import { taskKeyOf } from '../../src/store/tasks/task-store';
import { taskWorkflowId } from '../../src/workflows/messages';

describe('durability', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw?.close();
  });

  test('a task in flight survives stopping the API and the worker and starting new ones', async () => {
    const created = await gw.client.callTool('slow_compute', { seconds: 3, label: 'survivor' });
    const taskId = String(created.body.result?.taskId);
    expect(created.body.result?.resultType).toBe('task');

    await gw.stop();
    // Nothing serves the project now.
    await expect(gw.client.getTask(taskId)).rejects.toThrow();

    await gw.start();
    const done = await gw.client.waitForTask(taskId, undefined, 45_000);
    expect(done).toMatchObject({ status: 'completed', taskId });
    expect(JSON.stringify(done.result)).toContain('survivor');
  });

  test('an API process alone answers tasks/get from the store while no worker runs', async () => {
    const created = await gw.client.callTool('slow_compute', { seconds: 1, label: 'stored' });
    const taskId = String(created.body.result?.taskId);
    await gw.client.waitForTask(taskId);
    await gw.stop();
    await gw.start({ api: true, worker: false });
    const reply = await gw.client.getTask(taskId);
    expect(reply.body.result).toMatchObject({ status: 'completed', resultType: 'complete' });
    await gw.stop();
    await gw.start();
  });
});

describe('bounded history', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    // The workflow enlists its task with the watch hub again every 100 ms (the default tasks.watchBy; with
    // `activity`, watches would end every 100 ms), so a 12-second task produces far more history than the
    // dev server's lowered continue-as-new threshold (test/global-setup.ts) allows in one run.
    gw = await startTestGateway({
      config: { tasks: { maxWatchMs: 100, minPollIntervalMs: 50, hub: { reenlistAfterMs: 100 } } },
    });
  });
  afterAll(async () => {
    await gw?.close();
  });

  test('a long task continues as new and still completes with its result', async () => {
    // 12 s: at least ten enlistments (60 events) even when a loaded machine stretches each round to
    // about a second; 4 s was not always enough under a full parallel test run.
    const taskId = await longTaskCompletes(gw, 12, 'marathon');

    const client = await gw.temporalClient();
    const handle = client.workflow.getHandle(taskWorkflowId(taskKeyOf(taskId)));
    await handle.result(); // the client may read the end before the workflow has absorbed it
    const description = await handle.describe();
    const firstRunId = description.raw.workflowExecutionInfo?.firstRunId;
    expect(firstRunId).toBeTruthy();
    expect(firstRunId).not.toBe(description.runId);
    const history = await handle.fetchHistory();
    expect(history.events?.length ?? 0).toBeLessThan(120);
  }, 90_000);
});
