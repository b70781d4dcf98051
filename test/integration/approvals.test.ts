/**
 * Approvals (issue 27, docs/approvals.md) through the real gateway, a real Temporal dev server and the
 * example upstream, on SQLite and PostgreSQL: a call the project's policy names becomes a task that waits
 * with nothing sent upstream; approving sends exactly one call with the original arguments; denial,
 * expiry and withdrawal end it without a call; the refusals (twice, after expiry, another project, a lost
 * role, self-approval, a caller who lost access) are clear, audited, and send nothing.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../src/gateway/responses/result-cache';
import { taskKeyOf } from '../../src/store/tasks/task-store';
import { metricsText } from '../../src/telemetry/metrics';
import { taskWorkflowId } from '../../src/workflows/messages';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway, tokenUsers } from '../helpers/gateway';
import { approvalDigest } from '../helpers/approval-digest';
import type { McpTestClient } from '../helpers/mcp-client';
import { adminCall } from '../helpers/admin-api';

const ADMIN = 'admin-approvals-0000000000000000000000';
const T = {
  alice: 'trp_alice-approver-0000000000000000000000',
  bob: 'trp_bob-direct-member-000000000000000000',
  carol: 'trp_carol-other-team-0000000000000000000',
  dave: 'trp_dave-loses-role-00000000000000000000',
  erin: 'trp_erin-named-approver-0000000000000000',
  key: 'trk_approvals-project-key-00000000000000',
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test reads of JSON bodies
type Json = Record<string, any>;

let gw: TestGateway;
let calls: (tool: string) => Array<Record<string, unknown>>;

beforeAll(async () => {
  gw = await startTestGateway({
    config: { admin: { token: ADMIN } },
    projects: () => [],
    bootstrap: (url) => ({
      users: tokenUsers({ alice: T.alice, bob: T.bob, carol: T.carol, dave: T.dave, erin: T.erin }),
      teams: [
        { slug: 'ops', members: ['alice', 'dave'] },
        { slug: 'other', members: ['carol'] },
        { slug: 'reviewers', members: ['erin'] },
      ],
      projects: [
        {
          slug: 'guarded',
          team: 'ops',
          namespacing: false,
          members: ['bob'],
          apiKeys: [{ name: 'agent', key: T.key }],
          limits: { inlineTaskWaitMs: 1500 },
          upstreams: [{ alias: 'example', url }],
          approvals: { rules: [{ tools: ['greet'] }], approvers: { managers: false, teams: ['reviewers'] } },
        },
        { slug: 'elsewhere', team: 'other', namespacing: false, upstreams: [{ alias: 'example', url }] },
      ],
    }),
  });
  calls = (tool) =>
    gw.upstream.stats.calls.filter((c) => c.tool === tool).map((c) => c.arguments as Record<string, unknown>);
}, 180_000);
afterAll(async () => {
  await gw?.close();
});

const client = (token: string): McpTestClient => gw.clientFor('guarded').withToken(token);

async function admin(method: string, route: string, body?: unknown, token = ADMIN) {
  const reply = await adminCall(gw.client.url, token, method, route, body);
  return { status: reply.status, body: reply.body as Json };
}

/** Calls `greet` as a task-declaring client; returns the task id and its approval request. */
async function ask(token: string, name: string) {
  const reply = await client(token).callTool('greet', { name });
  expect(reply.body.result).toMatchObject({ resultType: 'task', status: 'working' });
  expect(String(reply.body.result?.statusMessage)).toMatch(/^Waiting for approval: greet on example/);
  const taskId = String(reply.body.result?.taskId);
  const listed = await admin('GET', '/approvals?project=guarded&status=pending');
  const approval = (listed.body.approvals as Array<Json>).find((a) => a.argumentsSha256 === sha({ name }));
  expect(approval).toBeDefined();
  return { taskId, id: String(approval?.id), approval: approval as Json };
}

const sha = (args: Record<string, unknown>) => approvalDigest(gw, args);

test('a call waits with nothing sent; approval sends exactly one call with the original arguments', async () => {
  const { taskId, id, approval } = await ask(T.key, 'Ada');
  expect(approval).toMatchObject({ status: 'pending', tool: 'greet', upstream: 'example', required: 1 });
  expect(approval.caller).toMatchObject({ kind: 'api_key' });
  expect(calls('greet').filter((a) => a.name === 'Ada')).toHaveLength(0);

  // The arguments' digest is keyed: not the SHA-256 anyone could compute from a guess of them.
  const plain = createHash('sha256')
    .update(canonicalJson({ name: 'Ada' }))
    .digest('hex');
  expect(approval.argumentsSha256).toMatch(/^[0-9a-f]{64}$/);
  expect(approval.argumentsSha256).not.toBe(plain);

  // The approver sees the arguments; the manager (not named by the policy) sees the request without them.
  const shown = await admin('GET', `/approvals/${id}`, undefined, T.erin);
  expect(shown.body).toMatchObject({ arguments: { name: 'Ada' }, mayDecide: true, policyVersion: 1 });
  const managerView = await admin('GET', `/approvals/${id}`, undefined, T.alice);
  expect(managerView.status).toBe(200);
  expect(managerView.body.arguments).toBeUndefined();
  expect(managerView.body.mayDecide).toBe(false);

  const decided = await admin('POST', `/approvals/${id}/approve`, { comment: 'fine' }, T.erin);
  expect(decided.status).toBe(200);
  expect(decided.body).toMatchObject({ status: 'approved', approvals: 1, required: 1 });
  const done = await client(T.key).waitForTask(taskId);
  expect(done).toMatchObject({ status: 'completed' });
  expect(JSON.stringify(done.result)).toContain('Hello, Ada!');
  expect(calls('greet').filter((a) => a.name === 'Ada')).toEqual([{ name: 'Ada' }]);

  // Approving again: refused, audited, nothing more sent.
  const again = await admin('POST', `/approvals/${id}/approve`, {}, T.erin);
  expect(again.status).toBe(409);
  expect(again.body.error.message).toMatch(/already approved/);
  expect(calls('greet').filter((a) => a.name === 'Ada')).toHaveLength(1);
  const audit = await admin('GET', '/projects/guarded/audit?limit=200');
  const actions = (audit.body.events as Array<{ action: string }>).map((e) => e.action);
  expect(actions).toEqual(
    expect.arrayContaining(['approval.requested', 'approval.approved', 'approval.refused']),
  );
});

test('a denial fails the task with who denied and why; nothing is sent', async () => {
  const { taskId, id } = await ask(T.key, 'Dee');
  expect((await admin('POST', `/approvals/${id}/deny`, {}, T.erin)).status).toBe(400);
  const denied = await admin('POST', `/approvals/${id}/deny`, { comment: 'not today' }, T.erin);
  expect(denied.body).toMatchObject({ status: 'denied' });
  const done = await client(T.key).waitForTask(taskId);
  expect(done).toMatchObject({ status: 'failed' });
  expect(JSON.stringify(done)).toContain('Denied by erin: not today');
  expect(calls('greet').filter((a) => a.name === 'Dee')).toHaveLength(0);
});

test('refusals: another team, a token that lost its role, self-approval where the policy forbids it', async () => {
  // The policy now names the project's managers too (ops: alice, dave); its version goes up.
  const set = await admin('PUT', '/projects/guarded/approval-policy', {
    rules: [{ tools: ['greet'] }],
    approvers: { managers: true, teams: ['reviewers'] },
  });
  expect(set.body.version).toBe(2);
  const { id } = await ask(T.alice, 'Self');

  // Another team's user learns nothing of the request.
  const carol = await admin('POST', `/approvals/${id}/approve`, {}, T.carol);
  expect(carol.status).toBe(404);
  const self = await admin('POST', `/approvals/${id}/approve`, {}, T.alice);
  expect(self.status).toBe(403);
  expect(self.body.error.message).toMatch(/own call/);
  // Dave may approve as a manager, until he leaves the team.
  expect((await admin('GET', `/approvals/${id}`, undefined, T.dave)).body.mayDecide).toBe(true);
  expect((await admin('DELETE', '/teams/ops/members/dave')).status).toBeLessThan(300);
  // Out of the team, he no longer sees the project or its requests.
  const lost = await admin('POST', `/approvals/${id}/approve`, {}, T.dave);
  expect(lost.status).toBe(404);
  // A manager named only by the new version cannot approve a request asked under the old one... this one
  // was asked under version 2, so erin (reviewers) still may.
  expect((await admin('POST', `/approvals/${id}/approve`, {}, T.erin)).status).toBe(200);
  const refusals = (await admin('GET', '/projects/guarded/audit?limit=200')).body.events as Array<{
    action: string;
    detail?: { reason?: string };
  }>;
  const reasons = refusals.filter((e) => e.action === 'approval.refused').map((e) => e.detail?.reason);
  expect(reasons).toEqual(expect.arrayContaining(['not_visible', 'self_approval']));
  expect((await admin('POST', '/teams/ops/members', { user: 'dave' })).status).toBeLessThan(300);
});

test("a call made with a project key counts as its creator's own", async () => {
  // Alice (a manager, and an approver under this version) creates a key and calls with it.
  await admin('PUT', '/projects/guarded/approval-policy', {
    rules: [{ tools: ['greet'] }],
    approvers: { managers: true, teams: ['reviewers'] },
  });
  const created = await admin('POST', '/projects/guarded/keys', { name: 'alice-agent' }, T.alice);
  expect(created.status).toBe(201);
  const { id } = await ask(String(created.body.key), 'ViaKey');
  const self = await admin('POST', `/approvals/${id}/approve`, {}, T.alice);
  expect(self.status).toBe(403);
  expect(self.body.error.message).toMatch(/own call/);
  // Dave, another manager, may.
  expect((await admin('POST', `/approvals/${id}/approve`, {}, T.dave)).status).toBe(200);
});

test('a policy change never widens who may approve a waiting request', async () => {
  await admin('PUT', '/projects/guarded/approval-policy', {
    rules: [{ tools: ['greet'] }],
    approvers: { managers: false, teams: ['reviewers'] },
  });
  const { id } = await ask(T.key, 'Narrow');
  // Managers named by a later version may not approve a request asked under this one.
  await admin('PUT', '/projects/guarded/approval-policy', {
    rules: [{ tools: ['greet'] }],
    approvers: { managers: true, teams: ['reviewers'] },
  });
  expect((await admin('POST', `/approvals/${id}/approve`, {}, T.alice)).status).toBe(403);
  // An approver removed by a later version loses the right at once.
  await admin('PUT', '/projects/guarded/approval-policy', {
    rules: [{ tools: ['greet'] }],
    approvers: { managers: true, teams: [] },
  });
  // (Named by nothing now, erin no longer sees the request at all.)
  expect((await admin('POST', `/approvals/${id}/approve`, {}, T.erin)).status).toBe(404);
  const denied = await admin('POST', `/approvals/${id}/deny`, { comment: 'cleanup' }, T.erin);
  expect(denied.status).toBe(404);
  expect(calls('greet').filter((a) => a.name === 'Narrow')).toHaveLength(0);
  await admin('PUT', '/projects/guarded/approval-policy', {
    rules: [{ tools: ['greet'] }],
    approvers: { managers: true, teams: ['reviewers'] },
  });
  expect((await admin('POST', `/approvals/${id}/deny`, { comment: 'cleanup' }, T.erin)).status).toBe(200);
});

test('a caller who lost access while waiting: approved, yet nothing is sent', async () => {
  const { taskId, id } = await ask(T.bob, 'Gone');
  expect((await admin('DELETE', '/projects/guarded/members/bob')).status).toBeLessThan(300);
  expect((await admin('POST', `/approvals/${id}/approve`, {}, T.erin)).status).toBe(200);
  // Bob cannot read his task any more; the manager sees it failed on the audit trail and the request.
  const shown = await admin('GET', `/approvals/${id}`);
  expect(shown.body.status).toBe('approved');
  await new Promise((r) => setTimeout(r, 1500));
  expect(calls('greet').filter((a) => a.name === 'Gone')).toHaveLength(0);
  expect((await admin('POST', '/projects/guarded/members', { user: 'bob' })).status).toBeLessThan(300);
  const done = await client(T.bob).waitForTask(taskId);
  expect(done).toMatchObject({ status: 'failed' });
  expect(JSON.stringify(done)).toContain('may no longer call this project');
});

test("the caller's tasks/cancel withdraws the request", async () => {
  const { taskId, id } = await ask(T.key, 'Withdrawn');
  const cancelled = await client(T.key).request('tasks/cancel', { taskId });
  expect(cancelled.body.error).toBeUndefined();
  expect(await client(T.key).waitForTask(taskId)).toMatchObject({ status: 'cancelled' });
  expect((await admin('GET', `/approvals/${id}`)).body.status).toBe('withdrawn');
  expect((await admin('POST', `/approvals/${id}/approve`, {}, T.erin)).status).toBe(409);
  expect(calls('greet').filter((a) => a.name === 'Withdrawn')).toHaveLength(0);
});

test('a request whose workflow was terminated is withdrawn when someone decides, not left "may still be taken"', async () => {
  const { taskId, id } = await ask(T.key, 'Ended');
  const temporal = await gw.temporalClient();
  await temporal.workflow.getHandle(taskWorkflowId(taskKeyOf(taskId))).terminate('test: operator ended it');
  const decided = await admin('POST', `/approvals/${id}/approve`, {}, T.erin);
  expect(decided.status).toBe(409);
  expect(decided.body.error.message).toMatch(/has ended .*nothing was sent, and the request is withdrawn/);
  expect((await admin('GET', `/approvals/${id}`)).body.status).toBe('withdrawn');
  const audit = await admin('GET', '/projects/guarded/audit?limit=200');
  expect(audit.body.events).toEqual(
    expect.arrayContaining([
      expect.objectContaining({
        action: 'approval.withdrawn',
        detail: expect.objectContaining({ approvalId: id }),
      }),
    ]),
  );
  expect(calls('greet').filter((a) => a.name === 'Ended')).toHaveLength(0);
});

test('expiry fails the task saying so; approving after it is refused', async () => {
  await admin('PUT', '/projects/guarded/approval-policy', {
    rules: [{ tools: ['greet'] }],
    approvers: { teams: ['reviewers'] },
    expiresAfterMs: 1500,
  });
  const { taskId, id } = await ask(T.key, 'Late');
  const done = await client(T.key).waitForTask(taskId, undefined, 20_000);
  expect(done).toMatchObject({ status: 'failed' });
  expect(JSON.stringify(done)).toContain('the approval request expired');
  const late = await admin('POST', `/approvals/${id}/approve`, {}, T.erin);
  expect(late.status).toBe(409);
  expect(late.body.error.message).toMatch(/expired/);
  expect(calls('greet').filter((a) => a.name === 'Late')).toHaveLength(0);
});

test('a client that cannot take tasks waits inline, then gets the error naming the task', async () => {
  await admin('PUT', '/projects/guarded/approval-policy', {
    rules: [{ tools: ['greet'] }],
    approvers: { teams: ['reviewers'] },
  });
  const reply = await client(T.key).callTool('greet', { name: 'Inline' }, { tasks: false });
  expect(reply.body.error).toBeDefined();
  expect(JSON.stringify(reply.body.error)).toMatch(/task/i);
  const pending = await admin('GET', '/approvals?project=guarded&status=pending');
  expect(
    (pending.body.approvals as Array<{ argumentsSha256: string }>).map((a) => a.argumentsSha256),
  ).toContain(sha({ name: 'Inline' }));
  expect(calls('greet').filter((a) => a.name === 'Inline')).toHaveLength(0);
});

test('/metrics counts the calls waiting for approval per project and upstream', async () => {
  const { id } = await ask(T.key, 'Counted');
  // The gateway runs in this process: its registry is the one `/metrics` prints.
  const metrics = await metricsText();
  const line = metrics
    .split('\n')
    .find((l) => l.startsWith('taskrouter_approvals_pending{project="guarded",upstream="example"}'));
  expect(Number(line?.split(' ').at(-1))).toBeGreaterThanOrEqual(1);
  expect((await admin('POST', `/approvals/${id}/deny`, { comment: 'counted' }, T.erin)).status).toBe(200);
});

test("another project's approvers cannot see or decide; tools outside the policy are not held", async () => {
  const { id } = await ask(T.key, 'Private');
  expect((await admin('GET', `/approvals/${id}`, undefined, T.carol)).status).toBe(404);
  expect((await admin('POST', `/approvals/${id}/approve`, {}, T.carol)).status).toBe(404);
  const list = await admin('GET', '/approvals', undefined, T.carol);
  expect(list.body.approvals).toEqual([]);
  const quick = await client(T.key).callTool('slow_compute', { seconds: 0 }, { tasks: false });
  expect(quick.body.result).toMatchObject({ resultType: 'complete' });
  expect((await admin('POST', `/approvals/${id}/deny`, { comment: 'done' }, T.erin)).status).toBe(200);
});
