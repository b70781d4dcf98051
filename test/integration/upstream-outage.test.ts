/**
 * Failure taxonomy while polling: a short upstream outage changes nothing the client sees; an outage
 * longer than the poll-failure budget ends the task failed with a clear JSON-RPC error.
 */
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { startExampleUpstream } from '../../examples/upstream/server';

let gw: TestGateway;

beforeEach(async () => {
  gw = await startTestGateway({
    config: { tasks: { minPollIntervalMs: 50, maxPollIntervalMs: 200, pollFailureBudget: 5 } },
  });
});
afterEach(async () => {
  await gw?.close();
});

test('a short outage is retried without changing the status, and the task then completes', async () => {
  const created = await gw.client.callTool('slow_compute', { seconds: 2, label: 'outage' });
  const taskId = String(created.body.result?.taskId);
  gw.upstream.setOffline(true);
  await new Promise((r) => setTimeout(r, 1000));
  expect((await gw.client.getTask(taskId)).body.result?.status).toBe('working');
  gw.upstream.setOffline(false);
  const done = await gw.client.waitForTask(taskId, undefined, 30_000);
  expect(done).toMatchObject({ status: 'completed' });
  expect(JSON.stringify(done.result)).toContain('outage');
});

test('an upstream that returns without the task ends it with a clear error', async () => {
  const created = await gw.client.callTool('slow_compute', { seconds: 30, label: 'amnesia' });
  const taskId = String(created.body.result?.taskId);
  const port = gw.upstream.port;
  await gw.upstream.close();
  // It comes back empty (its tasks were in memory).
  const back = await startExampleUpstream({ port, pollIntervalMs: 100 });
  try {
    const done = await gw.client.waitForTask(taskId, undefined, 30_000);
    expect(done).toMatchObject({
      status: 'failed',
      error: { message: expect.stringContaining('no longer knows') },
    });
  } finally {
    await back.close();
  }
});

test('an outage beyond the poll-failure budget ends the task failed with a clear error', async () => {
  const created = await gw.client.callTool('slow_compute', { seconds: 30, label: 'gone' });
  const taskId = String(created.body.result?.taskId);
  await gw.upstream.close();
  const done = await gw.client.waitForTask(taskId, undefined, 45_000);
  expect(done).toMatchObject({
    status: 'failed',
    error: { code: -32603, message: expect.stringContaining('stayed unreachable') },
  });
});
