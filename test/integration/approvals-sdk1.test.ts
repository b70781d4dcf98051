/**
 * Approvals (issue 27, docs/approvals.md) seen by a 2025-11-25 client that takes tasks: the official SDK
 * 1.x `Client` with the tasks capability, on SQLite and PostgreSQL with a real Temporal dev server and the
 * example upstream (running no tasks itself). The tool the policy names is listed with `execution.taskSupport: 'optional'`; its call
 * (with `params.task`) gets a task at once, `working` with the message naming what it waits for, and
 * nothing reaches the upstream; after the approver approves through the admin API the task gives the
 * upstream's result (by the SDK's task stream, and by tasks/result); after a denial tasks/result gives
 * the error saying who denied and why.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CallToolResultSchema, CreateTaskResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { approvalDigest } from '../helpers/approval-digest';
import { adminCall } from '../helpers/admin-api';

const ADMIN = 'admin-approvals-sdk1-00000000000000000000';
const ERIN = 'trp_erin-sdk1-approver-00000000000000000';
const KEY = 'trk_approvals-sdk1-agent-key-00000000000';
const TASK_CAPABILITIES = { tasks: { list: {}, cancel: {}, requests: { elicitation: { create: {} } } } };

let gw: TestGateway;
let client: Client;

beforeAll(async () => {
  gw = await startTestGateway({
    // The upstream runs no tasks itself here: every `taskSupport` mark in the listing is the policy's.
    upstream: { advertiseTasks: false },
    config: { admin: { token: ADMIN } },
    projects: () => [],
    bootstrap: (url) => ({
      users: [{ handle: 'erin', tokens: [{ name: 't', token: ERIN }] }],
      teams: [{ slug: 'ops', members: [] }],
      projects: [
        {
          slug: 'guarded',
          team: 'ops',
          namespacing: false,
          apiKeys: [{ name: 'agent', key: KEY }],
          upstreams: [{ alias: 'example', url }],
          approvals: { rules: [{ tools: ['greet'] }], approvers: { managers: false, users: ['erin'] } },
        },
      ],
    }),
  });
  client = new Client({ name: 'approvals-sdk1', version: '1.0.0' }, { capabilities: TASK_CAPABILITIES });
  const url = new URL(gw.clientFor('guarded').url);
  await client.connect(
    new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${KEY}` } } }),
  );
}, 180_000);
afterAll(async () => {
  await client?.close();
  await gw?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test reads of JSON bodies
type Json = Record<string, any>;

async function admin(method: string, route: string, body?: unknown, token = ADMIN) {
  const reply = await adminCall(gw.client.url, token, method, route, body);
  return { status: reply.status, body: reply.body as Json };
}

const sha = (args: Record<string, unknown>) => approvalDigest(gw, args);
const callsOf = (name: string) =>
  gw.upstream.stats.calls.filter(
    (c) => c.tool === 'greet' && (c.arguments as { name?: string }).name === name,
  );

/** The pending approval request of the call with these arguments. */
async function requestFor(name: string): Promise<Json> {
  const listed = await admin('GET', '/approvals?project=guarded&status=pending', undefined, ERIN);
  const found = (listed.body.approvals as Json[]).find((a) => a.argumentsSha256 === sha({ name }));
  if (!found) throw new Error(`no pending approval request for ${name}`);
  return found;
}

function text(result: CallToolResult | undefined): string {
  const content = result?.content[0];
  return content?.type === 'text' ? content.text : '';
}

test('the tool the policy names is listed as taking a task, only that one', async () => {
  const { tools } = await client.listTools();
  const marks = new Map(tools.map((t) => [t.name, t.execution?.taskSupport]));
  expect(marks.get('greet')).toBe('optional');
  expect(marks.has('slow_compute')).toBe(true);
  expect(marks.get('slow_compute')).toBeUndefined();
  expect(client.getServerCapabilities()?.tasks).toBeDefined();
});

test('the task waits with the message naming the request; approved, the SDK task stream gives the result', async () => {
  const name = 'Ada';
  const seen: Array<{ type: string; status?: string; message?: string }> = [];
  let result: CallToolResult | undefined;
  let approval: Json | undefined;
  for await (const m of client.experimental.tasks.callToolStream(
    { name: 'greet', arguments: { name } },
    CallToolResultSchema,
    { task: { ttl: 600_000 } },
  )) {
    if (m.type === 'taskCreated' || m.type === 'taskStatus') {
      seen.push({
        type: m.type,
        status: m.task.status,
        ...(m.task.statusMessage && { message: m.task.statusMessage }),
      });
      if (!approval) {
        // Nothing has reached the upstream; the approver sees the call and approves it.
        expect(callsOf(name)).toHaveLength(0);
        approval = await requestFor(name);
        const shown = await admin('GET', `/approvals/${approval.id}`, undefined, ERIN);
        expect(shown.body).toMatchObject({ arguments: { name }, mayDecide: true, status: 'pending' });
        const decided = await admin('POST', `/approvals/${approval.id}/approve`, { comment: 'ok' }, ERIN);
        expect(decided.body).toMatchObject({ status: 'approved', approvals: 1, required: 1 });
      }
    }
    if (m.type === 'result') result = m.result as CallToolResult;
    if (m.type === 'error') throw m.error;
  }
  expect(seen[0]).toMatchObject({ type: 'taskCreated', status: 'working' });
  expect(seen[0]?.message).toMatch(
    new RegExp(`^Waiting for approval: greet on example .*request ${approval?.id}`),
  );
  expect(text(result)).toContain('Hello, Ada!');
  expect(callsOf(name).map((c) => c.arguments)).toEqual([{ name }]);
});

test('tasks/get says working while it waits; after approval tasks/result gives the upstream result', async () => {
  const name = 'Bea';
  const created = await client.request(
    { method: 'tools/call', params: { name: 'greet', arguments: { name }, task: { ttl: 600_000 } } },
    CreateTaskResultSchema,
  );
  expect(created.task).toMatchObject({ status: 'working' });
  expect(created.task.statusMessage).toMatch(/^Waiting for approval: greet on example needs /);
  const taskId = created.task.taskId;
  const polled = await client.experimental.tasks.getTask(taskId);
  expect(polled).toMatchObject({ taskId, status: 'working', statusMessage: created.task.statusMessage });
  expect(callsOf(name)).toHaveLength(0);

  const { id } = await requestFor(name);
  expect((await admin('POST', `/approvals/${id}/approve`, {}, ERIN)).status).toBe(200);
  const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
  expect(text(result as CallToolResult)).toContain('Hello, Bea!');
  expect((await client.experimental.tasks.getTask(taskId)).status).toBe('completed');
  expect(callsOf(name)).toHaveLength(1);
});

test('denied: tasks/result gives the error saying who denied and why; nothing is sent', async () => {
  const name = 'Dee';
  const created = await client.request(
    { method: 'tools/call', params: { name: 'greet', arguments: { name }, task: { ttl: 600_000 } } },
    CreateTaskResultSchema,
  );
  const taskId = created.task.taskId;
  const { id } = await requestFor(name);
  const denied = await admin('POST', `/approvals/${id}/deny`, { comment: 'not today' }, ERIN);
  expect(denied.body).toMatchObject({ status: 'denied' });
  const failure = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema).then(
    (r) => ({ result: r }),
    (err: unknown) => ({ error: err }),
  );
  expect('error' in failure).toBe(true);
  const error = (failure as { error: unknown }).error;
  expect(error).toBeInstanceOf(McpError);
  expect((error as McpError).message).toContain('Denied by erin: not today');
  const task = await client.experimental.tasks.getTask(taskId);
  expect(task.status).toBe('failed');
  expect(task.statusMessage).toContain('Denied by erin: not today');
  expect(callsOf(name)).toHaveLength(0);
});
