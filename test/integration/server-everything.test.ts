/**
 * The reference 2025-era server, `@modelcontextprotocol/server-everything` (SDK 1.x, stateful, 2025-11-25
 * tasks), behind the gateway as an upstream: its tools through a 2026-07-28 client, and its task tool
 * `simulate-research-query` (`taskSupport: "required"`) as a durable gateway task, completed,
 * cancelled, with the input round trip, answered inline for a client without Tasks, and surviving a
 * restart of the gateway's processes. Real child process, real Temporal dev server, both databases.
 */
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import type { McpTestClient } from '../helpers/mcp-client';
import { resultText, TASKS_AND_FORM_CAPS } from '../helpers/mcp-client';
import type { ServerEverything } from '../helpers/server-everything';
import { startServerEverything } from '../helpers/server-everything';

/** Starting the upstreams and the gateway (a Temporal worker bundles its workflows) on a busy machine. */
const START_TIMEOUT_MS = 180_000;

let se: ServerEverything;
let gw: TestGateway;
let client: McpTestClient;

beforeAll(async () => {
  se = await startServerEverything();
  gw = await startTestGateway({
    projects: () => [
      { slug: 'everything', namespacing: false, upstreams: [{ alias: 'everything', url: se.url }] },
    ],
  });
  client = gw.clientFor('everything');
}, START_TIMEOUT_MS);
afterAll(async () => {
  await gw?.close();
  await se?.stop();
});

async function startResearch(args: Record<string, unknown>, capabilities?: Record<string, unknown>) {
  const created = await client.callTool(
    'simulate-research-query',
    args,
    capabilities ? { capabilities } : {},
  );
  expect(created.body.result).toMatchObject({ resultType: 'task', status: 'working' });
  return String(created.body.result?.taskId);
}

test('its tools are listed and callable through a 2026-07-28 client', async () => {
  const listed = await client.request('tools/list');
  const names = ((listed.body.result?.tools ?? []) as Array<{ name: string }>).map((t) => t.name);
  expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum', 'simulate-research-query']));
  const echo = await client.callTool('echo', { message: 'hello' }, { tasks: false });
  expect(echo.body.result).toMatchObject({ resultType: 'complete' });
  expect(resultText(echo.body.result)).toBe('Echo: hello');
  const sum = await client.callTool('get-sum', { a: 2, b: 3 });
  expect(resultText(sum.body.result)).toContain('5');
  const discover = await client.request('server/discover');
  expect(discover.body.result?.capabilities).toMatchObject({
    extensions: { 'io.modelcontextprotocol/tasks': {} },
  });
});

test('simulate-research-query runs as a durable gateway task and completes with its report', async () => {
  const taskId = await startResearch({ topic: 'rust' });
  expect(taskId).not.toContain('tr25'); // the gateway's own id, never the upstream's
  const done = await client.waitForTask(taskId, undefined, 30_000);
  expect(done).toMatchObject({ status: 'completed', taskId });
  expect(resultText(done.result as Record<string, unknown>)).toMatch(/^# Research Report: rust/);
});

test('a task is cancelled upstream with tasks/cancel', async () => {
  const taskId = await startResearch({ topic: 'cancel me' });
  const cancelled = await client.request('tasks/cancel', { taskId });
  expect(cancelled.body.error).toBeUndefined();
  const done = await client.waitForTask(taskId, undefined, 30_000);
  expect(done.status).toBe('cancelled');
});

test('an ambiguous query asks for input, and the tasks/update answer reaches the upstream', async () => {
  const taskId = await startResearch({ topic: 'python', ambiguous: true }, TASKS_AND_FORM_CAPS);
  const asking = await client.waitForTask(taskId, (s) => s !== 'working', 30_000);
  expect(asking.status).toBe('input_required');
  const requests = asking.inputRequests as Record<
    string,
    { method: string; params: Record<string, unknown> }
  >;
  const [key, request] = Object.entries(requests)[0] ?? [];
  expect(request).toMatchObject({
    method: 'elicitation/create',
    params: { message: expect.stringContaining('python') },
  });
  expect(JSON.stringify(request)).not.toContain('related-task');
  // The request stays on every poll although the upstream sent it only once.
  expect((await client.getTask(taskId)).body.result?.inputRequests).toEqual(requests);
  const answered = await client.request(
    'tasks/update',
    { taskId, inputResponses: { [String(key)]: { action: 'accept', content: { interpretation: 'snake' } } } },
    { capabilities: TASKS_AND_FORM_CAPS },
  );
  expect(answered.body.error).toBeUndefined();
  const done = await client.waitForTask(taskId, undefined, 30_000);
  expect(done.status).toBe('completed');
  expect(resultText(done.result as Record<string, unknown>)).toMatch(/^# Research Report: python \(snake\)/);
});

test('a client without Tasks gets the task tool answered inline', async () => {
  const res = await client.callTool('simulate-research-query', { topic: 'inline' }, { tasks: false });
  expect(res.body.error).toBeUndefined();
  expect(resultText(res.body.result)).toMatch(/^# Research Report: inline/);
});

test('a task survives stopping the gateway processes and starting new ones', async () => {
  const taskId = await startResearch({ topic: 'survivor' });
  await gw.stop();
  // The API alone answers from the store while no worker runs.
  await gw.start({ api: true, worker: false });
  expect((await client.getTask(taskId)).body.result?.status).toMatch(/working|input_required/);
  await gw.start({ api: false, worker: true });
  // The new worker reaches the same upstream session (from the store) and so the same upstream task.
  const done = await client.waitForTask(taskId, undefined, 45_000);
  expect(done.status).toBe('completed');
  expect(resultText(done.result as Record<string, unknown>)).toMatch(/^# Research Report: survivor/);
});

test('an open input request outlives a restart of the gateway processes, and the answer still arrives', async () => {
  const taskId = await startResearch({ topic: 'python', ambiguous: true }, TASKS_AND_FORM_CAPS);
  const asking = await client.waitForTask(taskId, (s) => s !== 'working', 30_000);
  expect(asking.status).toBe('input_required');
  await gw.stop();
  await gw.start();
  // The upstream sent its request once, before the restart; the new worker still presents it.
  const again = await client.waitForTask(taskId, () => true);
  expect(again).toMatchObject({ status: 'input_required', inputRequests: asking.inputRequests });
  const [key] = Object.keys(asking.inputRequests as object);
  const answered = await client.request(
    'tasks/update',
    {
      taskId,
      inputResponses: { [String(key)]: { action: 'accept', content: { interpretation: 'comedy' } } },
    },
    { capabilities: TASKS_AND_FORM_CAPS },
  );
  expect(answered.body.error).toBeUndefined();
  const done = await client.waitForTask(taskId, undefined, 45_000);
  expect(resultText(done.result as Record<string, unknown>)).toMatch(/^# Research Report: python \(comedy\)/);
});

test('a task whose upstream session is gone (the upstream restarted) fails with a clear error', async () => {
  const taskId = await startResearch({ topic: 'amnesia' });
  const port = se.port;
  await se.stop();
  se = await startServerEverything({ port });
  const done = await client.waitForTask(taskId, undefined, 45_000);
  expect(done).toMatchObject({
    status: 'failed',
    error: { message: expect.stringContaining('no longer knows') },
  });
  // Calls that need no old session just open a new one.
  const echo = await client.callTool('echo', { message: 'again' }, { tasks: false });
  expect(resultText(echo.body.result)).toBe('Echo: again');
});
