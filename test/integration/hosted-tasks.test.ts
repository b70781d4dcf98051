/**
 * Hosted tasks (issue 24, docs/hosted-tasks.md): ordinary tools of the reference 2025-era server
 * (`@modelcontextprotocol/server-everything`, a real child process) run as the gateway's own durable
 * tasks because the project upstream's hosting policy names them. A quick call is answered as it is; a
 * slow one becomes a task whose progress is its status message and whose result completes it, for a
 * client that takes tasks, and is answered inline for one that does not; tasks/cancel aborts it; a tool
 * the upstream runs as its own task keeps its own. Real gateway, Temporal dev server, both databases.
 */
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import type { McpTestClient } from '../helpers/mcp-client';
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
    ],
  });
  client = gw.clientFor('hosting');
}, START_TIMEOUT_MS);
afterAll(async () => {
  await gw?.close();
  await se?.stop();
});

function text(result: Record<string, unknown> | undefined): string {
  const content = (result?.content ?? []) as Array<{ type: string; text?: string }>;
  return content.map((c) => c.text ?? '').join('\n');
}

test('a quick hosted call is answered synchronously, as the upstream answered it', async () => {
  const reply = await client.callTool('echo', { message: 'hosted hello' });
  expect(reply.body.result).toMatchObject({ resultType: 'complete' });
  expect(text(reply.body.result)).toContain('hosted hello');
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
  expect(text(last?.result as Record<string, unknown>)).toContain('Long running operation completed');
});

test('a client that cannot take tasks gets the hosted result inline', async () => {
  const reply = await client.callTool(SLOW, { duration: 3, steps: 3 }, { tasks: false });
  expect(reply.body.result).toMatchObject({ resultType: 'complete' });
  expect(text(reply.body.result)).toContain('Long running operation completed');
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
