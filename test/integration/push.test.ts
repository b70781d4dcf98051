/**
 * Push the 2026 way: `subscriptions/listen` with the Tasks extension's `taskIds` delivers
 * `notifications/tasks` for the caller's own tasks, from the store, so a stream on one API replica gets
 * the changes a worker recorded anywhere. Real gateway, Temporal dev server and example upstream.
 */
import type { Runtime } from '../../src/main/runtime';
import { META } from '../../src/protocol';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway, startApiReplica } from '../helpers/gateway';
import { listen } from '../helpers/listen';
import { TASKS_AND_FORM_CAPS } from '../helpers/mcp-client';
import { until } from '../helpers/until';

let gw: TestGateway;
let apiOnly: Runtime;
beforeAll(async () => {
  gw = await startTestGateway();
  apiOnly = await startApiReplica(gw);
});
afterAll(async () => {
  await apiOnly?.close();
  await gw?.close();
});

async function startTask(tool: string, args: Record<string, unknown>): Promise<string> {
  const reply = await gw.client.callTool(tool, args, { capabilities: TASKS_AND_FORM_CAPS });
  expect(reply.body.result?.resultType).toBe('task');
  return String(reply.body.result?.taskId);
}

const isTaskNote = (status: string) => (m: Record<string, unknown>) =>
  m.method === 'notifications/tasks' && (m.params as { status?: string }).status === status;

test("notifications/tasks for the caller's tasks, from a stream on another API replica", async () => {
  const taskId = await startTask('slow_compute', { seconds: 1 });
  const { handle } = await listen(`${String(apiOnly.url)}/v1/mcp/demo`, { taskIds: [taskId, 'trt_unknown'] });
  try {
    const ack = await handle.next((m) => m.method === 'notifications/subscriptions/acknowledged');
    // Exactly what is honoured: the caller's own task; the unknown id is left out.
    expect(ack.params).toMatchObject({
      notifications: { taskIds: [taskId] },
      _meta: { [META.subscriptionId]: 'L1' },
    });
    const done = await handle.next(isTaskNote('completed'));
    expect(done.params).toMatchObject({
      taskId,
      status: 'completed',
      result: { resultType: 'complete' },
      _meta: { [META.subscriptionId]: 'L1' },
    });
    expect((done.params as Record<string, unknown>).resultType).toBeUndefined();
  } finally {
    handle.close();
  }
});

test('input requests arrive as the task asks for them', async () => {
  const taskId = await startTask('confirm_delete', { filename: 'push.txt' });
  const { handle } = await listen(gw.client.url, { taskIds: [taskId] });
  try {
    // The task may already ask before the stream opens: the state pushed right after the
    // acknowledgement carries the question then.
    const asking = await handle.next(isTaskNote('input_required'));
    expect(Object.keys((asking.params as { inputRequests?: object }).inputRequests ?? {})).toEqual([
      'confirm',
    ]);
  } finally {
    handle.close();
  }
});

test('a task that ended before the stream opened is pushed once, right after the acknowledgement', async () => {
  const taskId = await startTask('slow_compute', { seconds: 1 });
  await until(
    async () =>
      (await gw.client.getTask(taskId, { capabilities: TASKS_AND_FORM_CAPS })).body.result?.status ===
      'completed',
    () => 'the task never completed',
  );
  const { handle } = await listen(gw.client.url, { taskIds: [taskId] });
  try {
    const done = await handle.next(isTaskNote('completed'));
    expect(done.params).toMatchObject({ taskId, result: { resultType: 'complete' } });
    const methods = handle.messages.map((m) => m.method);
    expect(methods).toEqual(['notifications/subscriptions/acknowledged', 'notifications/tasks']);
  } finally {
    handle.close();
  }
});

test('asking for task notifications without the Tasks extension is -32021', async () => {
  const { res, handle } = await listen(gw.client.url, { taskIds: ['trt_x'] }, { extensions: {} });
  expect(res.status).toBe(400);
  const reply = await handle.next((m) => 'error' in m);
  expect((reply.error as { code: number }).code).toBe(-32021);
});

test("the acknowledgement names exactly what is honoured: the caller's task ids, the list changes and the resource updates the upstream announces", async () => {
  // The example upstream announces tools and prompts list changes and resource updates, not resources
  // list changes (test/integration/resource-push.test.ts covers resource updates in full).
  const own = await startTask('slow_compute', { seconds: 30 });
  const { handle } = await listen(gw.client.url, {
    toolsListChanged: true,
    promptsListChanged: true,
    resourcesListChanged: true,
    resourceSubscriptions: ['test://static-text', 'test://missing'],
    taskIds: [own, 'trt_never-issued-000000000000000000000000'],
  });
  try {
    const ack = await handle.next((m) => m.method === 'notifications/subscriptions/acknowledged');
    expect((ack.params as { notifications: object }).notifications).toEqual({
      toolsListChanged: true,
      promptsListChanged: true,
      resourceSubscriptions: ['test://static-text'],
      taskIds: [own],
    });
  } finally {
    handle.close();
  }
  const discovered = await gw.client.request('server/discover', {});
  const caps = discovered.body.result?.capabilities as Record<string, Record<string, unknown> | undefined>;
  expect(caps.tools?.listChanged).toBe(true);
  expect(caps.prompts?.listChanged).toBe(true);
  expect(caps.resources?.listChanged).toBeUndefined();
  expect(caps.resources?.subscribe).toBe(true);
  await gw.client.request('tasks/cancel', { taskId: own });
  // Other callers' task ids are left out as well: test/integration/authz-matrix.test.ts.
});

test('a replica shutting down ends its streams with the final result; reconnected elsewhere, no terminal status is lost', async () => {
  const leaving = await startApiReplica(gw);
  const taskId = await startTask('slow_compute', { seconds: 2 });
  const first = await listen(`${String(leaving.url)}/v1/mcp/demo`, { taskIds: [taskId] });
  await first.handle.next((m) => m.method === 'notifications/subscriptions/acknowledged');
  await leaving.close();
  // The orderly end the spec asks for, not a dropped connection.
  const final = await first.handle.next((m) => 'result' in m);
  expect(final).toMatchObject({
    id: 'L1',
    result: { resultType: 'complete', _meta: { [META.subscriptionId]: 'L1' } },
  });
  first.handle.close();
  // The client reconnects to a replica still running; whatever happened meanwhile, tasks/get has it.
  const again = await listen(gw.client.url, { taskIds: [taskId] });
  try {
    const ack = await again.handle.next((m) => m.method === 'notifications/subscriptions/acknowledged');
    expect(ack.params).toMatchObject({ notifications: { taskIds: [taskId] } });
    const done = await gw.client.waitForTask(taskId);
    expect(done.status).toBe('completed');
  } finally {
    again.handle.close();
  }
});
