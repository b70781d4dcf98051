/**
 * Hosted tasks (issue 24, docs/hosted-tasks.md): ordinary tools of the reference 2025-era server
 * (`@modelcontextprotocol/server-everything`, a real child process) run as the gateway's own durable
 * tasks because the project upstream's hosting policy names them. A quick call is answered as it is; a
 * slow one becomes a task whose progress is its status message and whose result completes it, for a
 * client that takes tasks, and is answered inline for one that does not; tasks/cancel aborts it; a tool
 * the upstream runs as its own task keeps its own. Real gateway, Temporal dev server, both databases.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { listen } from '../helpers/listen';
import { streamToolCall } from '../helpers/sdk1-tasks';
import type { McpTestClient } from '../helpers/mcp-client';
import { resultText } from '../helpers/mcp-client';
import type { ServerEverything } from '../helpers/server-everything';
import { startServerEverything } from '../helpers/server-everything';

const START_TIMEOUT_MS = 180_000;
const SLOW = 'trigger-long-running-operation';

let se: ServerEverything;
let gw: TestGateway;
let client: McpTestClient;

beforeAll(async () => {
  se = await startServerEverything();
  gw = await startTestGateway({
    projects: () => [
      {
        slug: 'hosting',
        namespacing: false,
        upstreams: [
          {
            alias: 'everything',
            url: se.url,
            hosting: {
              tools: ['echo', 'trigger-*', 'simulate-research-query'],
              promoteAfterMs: 1500,
              repeatable: ['!trigger-long-running-operation'],
            },
          },
        ],
      },
      {
        // The same tool under a policy that lets its annotations (readOnlyHint) count: repeatable.
        slug: 'repeating',
        namespacing: false,
        upstreams: [{ alias: 'everything', url: se.url, hosting: { tools: ['trigger-*'] } }],
      },
    ],
  });
  client = gw.clientFor('hosting');
}, START_TIMEOUT_MS);
afterAll(async () => {
  await gw?.close();
  await se?.stop();
});

test('a quick hosted call is answered synchronously, as the upstream answered it', async () => {
  const reply = await client.callTool('echo', { message: 'hosted hello' });
  expect(reply.body.result).toMatchObject({ resultType: 'complete' });
  expect(resultText(reply.body.result)).toContain('hosted hello');
});

test('a slow hosted call becomes a task: progress is its status message, its result completes it', async () => {
  const created = await client.callTool(SLOW, { duration: 4, steps: 4 });
  expect(created.body.result).toMatchObject({ resultType: 'task', status: 'working' });
  const taskId = String(created.body.result?.taskId);
  const seen = new Set<string>();
  const deadline = Date.now() + 30_000;
  let last: Record<string, unknown> | undefined;
  while (Date.now() < deadline) {
    last = (await client.getTask(taskId)).body.result;
    if (typeof last?.statusMessage === 'string') seen.add(last.statusMessage);
    if (last?.status !== 'working') break;
    await new Promise((r) => setTimeout(r, 200));
  }
  expect([...seen].some((m) => /\(\d\/4\)/.test(m))).toBe(true);
  expect(last).toMatchObject({ status: 'completed', taskId });
  expect(resultText(last?.result as Record<string, unknown>)).toContain('Long running operation completed');
});

test('a client gone after creation follows the hosted task by push: progress, then the result', async () => {
  const created = await client.callTool(SLOW, { duration: 4, steps: 4 });
  const taskId = String(created.body.result?.taskId);
  const { handle } = await listen(client.url, { taskIds: [taskId] });
  try {
    const note = (m: Record<string, unknown>) =>
      m.method === 'notifications/tasks' ? (m.params as Record<string, unknown>) : undefined;
    // The state right after the acknowledgement, or a later one: progress the upstream reported.
    const progressed = await handle.next((m) => /\(\d\/4\)/.test(String(note(m)?.statusMessage)), 20_000);
    expect(note(progressed)).toMatchObject({ taskId, status: 'working' });
    const done = await handle.next((m) => note(m)?.status === 'completed', 20_000);
    expect(resultText(note(done)?.result as Record<string, unknown>)).toContain(
      'Long running operation completed',
    );
  } finally {
    handle.close();
  }
});

test('a client that cannot take tasks gets the hosted result inline', async () => {
  const reply = await client.callTool(SLOW, { duration: 3, steps: 3 }, { tasks: false });
  expect(reply.body.result).toMatchObject({ resultType: 'complete' });
  expect(resultText(reply.body.result)).toContain('Long running operation completed');
});

test('tasks/cancel aborts a hosted call and ends its task cancelled', async () => {
  const created = await client.callTool(SLOW, { duration: 20, steps: 20 });
  const taskId = String(created.body.result?.taskId);
  expect(created.body.result).toMatchObject({ resultType: 'task' });
  const cancelled = await client.request('tasks/cancel', { taskId });
  expect(cancelled.body.error).toBeUndefined();
  const done = await client.waitForTask(taskId, undefined, 15_000);
  expect(done).toMatchObject({ status: 'cancelled' });
});

test('a tool the upstream runs as its own task keeps its task, hosting rule or not', async () => {
  const created = await client.callTool('simulate-research-query', { topic: 'hosting' });
  expect(created.body.result).toMatchObject({ resultType: 'task', status: 'working' });
  const done = await client.waitForTask(String(created.body.result?.taskId), undefined, 30_000);
  expect(done.status).toBe('completed');
  // The upstream's own task: its report, not a hosted call's answer.
  expect(JSON.stringify(done.result)).toMatch(/research/i);
});

test('an SDK 1.x client sees hosted tools as optional tasks, and params.task makes one', async () => {
  const client1 = new Client(
    { name: 'sdk1-hosted', version: '1.0.0' },
    { capabilities: { tasks: { list: {}, cancel: {} } } },
  );
  await client1.connect(new StreamableHTTPClientTransport(new URL(client.url)));
  try {
    const { tools } = await client1.listTools();
    const slow = tools.find((t) => t.name === SLOW);
    expect(slow?.execution).toMatchObject({ taskSupport: 'optional' });
    const { statuses, result: final } = await streamToolCall(
      client1,
      SLOW,
      { duration: 2, steps: 2 },
      { task: { ttl: 60_000 } },
    );
    expect(statuses[0]).toBe('working');
    expect(resultText(final as unknown as Record<string, unknown>)).toContain(
      'Long running operation completed',
    );
  } finally {
    await client1.close();
  }
});

/** Starts a slow hosted call and waits until the upstream reports progress (the call was sent). */
async function slowCallUnderWay(c: McpTestClient, seconds: number): Promise<string> {
  const created = await c.callTool(SLOW, { duration: seconds, steps: seconds });
  expect(created.body.result).toMatchObject({ resultType: 'task' });
  const taskId = String(created.body.result?.taskId);
  const deadline = Date.now() + 20_000;
  for (;;) {
    const s = (await c.getTask(taskId)).body.result;
    if (/\(\d+\/\d+\)/.test(String(s?.statusMessage))) return taskId;
    if (Date.now() > deadline) throw new Error(`no progress: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

// The call that may not be repeated is tested under kill -9 with an upstream that keeps no streams
// (test/main/hosted-kill.test.ts): server-everything keeps them, so its call may be re-attached instead.
describe('a worker lost while a hosted call runs', () => {
  test('a repeatable call is re-attached or sent again, and its answer completes the task', async () => {
    const repeating = gw.clientFor('repeating');
    const taskId = await slowCallUnderWay(repeating, 12);
    await gw.stop();
    await gw.start();
    const done = await repeating.waitForTask(taskId, undefined, 120_000);
    expect(done.status).toBe('completed');
    expect(resultText(done.result as Record<string, unknown>)).toContain('Long running operation completed');
  }, 180_000);
});
