/**
 * The durable task path end to end: MCP client → gateway (Koa) → Temporal workflow → example upstream
 * over HTTP, on the shared Temporal dev server.
 */
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { recordReplies, TASKS_AND_FORM_CAPS } from '../helpers/mcp-client';
import { cancelEndsTask, confirmDeleteCompletes, createTask } from '../helpers/task-steps';

let gw: TestGateway;
/** Every body and header the client received, to prove upstream task ids never leak. */
let seen: string[] = [];

beforeAll(async () => {
  gw = await startTestGateway();
  seen = recordReplies(gw.client);
});
afterAll(async () => {
  await gw?.close();
});

test('a synchronous tool on the task path returns a plain CallToolResult', async () => {
  const reply = await gw.client.callTool('greet', { name: 'Ada' });
  expect(reply.status).toBe(200);
  expect(reply.body.result).toMatchObject({
    resultType: 'complete',
    content: [{ type: 'text', text: expect.stringContaining('Ada') }],
    _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'taskrouter' } },
  });
  expect(reply.body.result).not.toHaveProperty('taskId');
});

test('slow_compute becomes a gateway task that completes with the result inlined', async () => {
  const created = await gw.client.callTool('slow_compute', { seconds: 1, label: 'alpha' });
  const task = created.body.result!;
  expect(task).toMatchObject({ resultType: 'task', status: 'working' });
  expect(task.taskId).toMatch(/^trt_[A-Za-z0-9_-]{32}$/);
  expect(task.ttlMs).toEqual(expect.any(Number));
  expect(task.pollIntervalMs).toEqual(expect.any(Number));

  // Durable before return: the id resolves at once.
  const first = await gw.client.getTask(String(task.taskId));
  expect(first.status).toBe(200);
  expect(first.body.result?.resultType).toBe('complete');
  expect(['working', 'completed']).toContain(first.body.result?.status);

  const done = await gw.client.waitForTask(String(task.taskId));
  expect(done).toMatchObject({ status: 'completed', resultType: 'complete', taskId: task.taskId });
  expect(JSON.stringify(done.result)).toContain('alpha');
});

test('failing_job completes with isError; protocol_error_job fails with the JSON-RPC error', async () => {
  const failing = await createTask(gw, 'failing_job', {});
  const protocolError = await createTask(gw, 'protocol_error_job', {});
  const [a, b] = await Promise.all([gw.client.waitForTask(failing), gw.client.waitForTask(protocolError)]);
  expect(a).toMatchObject({ status: 'completed', result: { isError: true } });
  expect(b).toMatchObject({
    status: 'failed',
    error: { code: expect.any(Number), message: expect.any(String) },
  });
  expect(b).not.toHaveProperty('result');
});

test('tasks/cancel is acknowledged and the task ends cancelled upstream and at the gateway', async () => {
  const taskId = await createTask(gw, 'slow_compute', { seconds: 30, label: 'long' });
  await cancelEndsTask(gw, taskId);
  // Cancelling a terminal task is an idempotent ack.
  const again = await gw.client.request('tasks/cancel', { taskId });
  expect(again.body.result).toMatchObject({ resultType: 'complete' });
});

test('confirm_delete asks for input; tasks/update answers it and the task completes', async () => {
  await confirmDeleteCompletes(gw, 'notes.txt');
});

test('multi_input accepts answers one key at a time; only the unanswered key remains', async () => {
  const taskId = await createTask(gw, 'multi_input', {}, TASKS_AND_FORM_CAPS);
  const asking = await gw.client.waitForTask(taskId, (s) => s === 'input_required');
  expect(Object.keys(asking.inputRequests as object).sort()).toEqual(['first', 'second']);

  // Answering input needs form elicitation declared on the tasks/update request itself.
  const undeclared = await gw.client.request('tasks/update', {
    taskId,
    inputResponses: { first: { action: 'accept', content: { name: 'one' } } },
  });
  expect(undeclared.status).toBe(400);
  expect(undeclared.body.error).toMatchObject({
    code: -32021,
    data: { requiredCapabilities: { elicitation: { form: {} } } },
  });

  await gw.client.request(
    'tasks/update',
    {
      taskId,
      inputResponses: { first: { action: 'accept', content: { name: 'one' } }, bogus: { action: 'accept' } },
    },
    { capabilities: TASKS_AND_FORM_CAPS },
  );
  const partial = await gw.client.getTask(taskId);
  expect(partial.body.result?.status).toBe('input_required');
  expect(Object.keys(partial.body.result?.inputRequests as object)).toEqual(['second']);

  await gw.client.request(
    'tasks/update',
    { taskId, inputResponses: { second: { action: 'accept', content: { name: 'two' } } } },
    { capabilities: TASKS_AND_FORM_CAPS },
  );
  const done = await gw.client.waitForTask(taskId);
  expect(done.status).toBe('completed');
  expect(JSON.stringify(done.result)).toMatch(/one[\s\S]*two/);
});

test('a client that does not declare Tasks never gets a task: a task-only tool is answered inline', async () => {
  const sync = await gw.client.callTool('greet', { name: 'Bo' }, { tasks: false });
  expect(sync.body.result?.resultType).toBe('complete');
  // The upstream runs failing_job only as a task: the gateway runs it and answers with the final result.
  const required = await gw.client.callTool('failing_job', {}, { tasks: false });
  expect(required.status).toBe(200);
  expect(required.body.result).toMatchObject({ resultType: 'complete', isError: true });
  expect(required.body.result?.taskId).toBeUndefined();
  const followUp = await gw.client.getTask('trt_whatever', { tasks: false });
  expect(followUp.status).toBe(400);
  expect(followUp.body.error?.code).toBe(-32021);
});

test('an unknown task id gets -32602 for get, update and cancel', async () => {
  for (const method of ['tasks/get', 'tasks/cancel']) {
    const reply = await gw.client.request(method, { taskId: 'trt_doesnotexist' });
    expect(reply.body.error?.code).toBe(-32602);
  }
  const update = await gw.client.request('tasks/update', { taskId: 'trt_nope', inputResponses: {} });
  expect(update.body.error?.code).toBe(-32602);
});

test('a header that disagrees with the body gets -32020 and HTTP 400', async () => {
  const method = await gw.client.callTool(
    'greet',
    { name: 'x' },
    { headers: { 'mcp-method': 'tools/list' } },
  );
  expect(method.status).toBe(400);
  expect(method.body.error?.code).toBe(-32020);
  const name = await gw.client.callTool('greet', { name: 'x' }, { headers: { 'mcp-name': 'other' } });
  expect(name.status).toBe(400);
  expect(name.body.error?.code).toBe(-32020);
  const taskName = await gw.client.request(
    'tasks/get',
    { taskId: 'trt_a' },
    { headers: { 'mcp-name': 'trt_b' } },
  );
  expect(taskName.status).toBe(400);
  expect(taskName.body.error?.code).toBe(-32020);
});

test('upstream task ids never reach the client', () => {
  expect(gw.upstream.stats.taskIds.length).toBeGreaterThanOrEqual(5);
  const everything = seen.join('\n');
  for (const upstreamId of gw.upstream.stats.taskIds) expect(everything).not.toContain(upstreamId);
});
