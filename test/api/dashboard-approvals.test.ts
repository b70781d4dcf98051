/**
 * Approvals on the dashboard (issue 27, item 4; docs/approvals.md), end to end in headless Chromium
 * against the real gateway, Temporal dev server and example upstream, on SQLite and PostgreSQL: a 2026
 * client's call of a tool the project's policy names waits; the approver signs in, opens Approvals, sees
 * the arguments (as text) and approves or denies with a comment; the upstream gets exactly one call with
 * the original arguments (or none), and the client learns the outcome by tasks/get and by push. An
 * expired request shows as expired, with no buttons. Refusals (one's own call) are shown as the server
 * words them. With TASKROUTER_SCREENSHOTS_DIR set (`npm run docs:screenshots`), saves the Approvals
 * view and a request's page there.
 */
import path from 'node:path';
import type { Page } from 'playwright-core';
import { DashboardPages, pageUntil } from '../helpers/browser';
import { request } from '../helpers/dashboard';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { approvalDigest } from '../helpers/approval-digest';
import type { Listen } from '../helpers/listen';
import { listen } from '../helpers/listen';

const ADMIN = 'admin-dashboard-approvals-000000000000';
const T = {
  ana: 'trp_ana-dashboard-approver-000000000000',
  olga: 'trp_olga-dashboard-other-team-0000000000',
  rita: 'trp_rita-dashboard-reviewer-00000000000',
  key: 'trk_dashboard-approvals-key-0000000000000',
};

let gw: TestGateway;
let baseUrl: string;
let pages: DashboardPages;

beforeAll(async () => {
  gw = await startTestGateway({
    config: { admin: { token: ADMIN } },
    projects: () => [],
    bootstrap: (url) => ({
      users: (['ana', 'olga', 'rita'] as const).map((handle) => ({
        handle,
        tokens: [{ name: 'dashboard', token: T[handle] }],
      })),
      teams: [
        { slug: 'ops', members: ['ana'] },
        { slug: 'other', members: ['olga'] },
        { slug: 'reviewers', members: ['rita'] },
      ],
      projects: [
        {
          slug: 'guarded',
          team: 'ops',
          namespacing: false,
          apiKeys: [{ name: 'agent', key: T.key }],
          upstreams: [{ alias: 'example', url }],
          approvals: { rules: [{ tools: ['greet'] }], approvers: { managers: true } },
        },
      ],
    }),
  });
  baseUrl = gw.client.url.replace(/\/v1\/mcp\/.*$/, '');
  pages = await DashboardPages.launch();
}, 180_000);
afterAll(async () => {
  await pages?.close();
  await gw?.close();
});
afterEach(() => {
  pages.expectClean();
});

const agent = () => gw.clientFor('guarded').withToken(T.key);
const greets = (name: string) =>
  gw.upstream.stats.calls.filter((c) => c.tool === 'greet' && c.arguments?.['name'] === name);
const sha = (args: Record<string, unknown>) => approvalDigest(gw, args);
const dashboard = (token: string, route: string) =>
  request(`${baseUrl}${route}`, 'GET', { authorization: `Bearer ${token}` });

const signIn = (token: string): Promise<Page> => pages.signIn(baseUrl, token);

/**
 * The agent (a 2026 client declaring tasks) calls `greet`: the call waits for approval, a task at once.
 * Follows the task by push from then on; returns the task, its approval's id and the push stream.
 */
async function ask(args: Record<string, unknown>): Promise<{ taskId: string; id: string; push: Listen }> {
  const reply = await agent().callTool('greet', args);
  expect(reply.body.result).toMatchObject({ resultType: 'task', status: 'working' });
  expect(String(reply.body.result?.statusMessage)).toMatch(/^Waiting for approval: greet on example/);
  const taskId = String(reply.body.result?.taskId);
  const { handle: push } = await listen(agent().url, { taskIds: [taskId] }, undefined, {
    authorization: `Bearer ${T.key}`,
  });
  const listed = await dashboard(T.ana, '/v1/approvals?project=guarded&status=pending');
  const approval = (listed.body.approvals as Array<{ id: string; argumentsSha256: string }>).find(
    (a) => a.argumentsSha256 === sha(args),
  );
  expect(approval).toBeDefined();
  return { taskId, id: String(approval?.id), push };
}

/** The task's status notification on the push stream, once it is `status`. */
async function pushed(push: Listen, taskId: string, status: string) {
  const note = await push.next((m) => {
    const p = m.params as Record<string, unknown> | undefined;
    return m.method === 'notifications/tasks' && p?.taskId === taskId && p?.status === status;
  });
  return note.params as Record<string, unknown>;
}

/** From the top bar's Approvals link to the request's page. */
async function openApproval(page: Page, id: string): Promise<void> {
  await page.locator('#approvals-link').click();
  await page.getByRole('heading', { name: 'Approvals' }).waitFor();
  await page.locator(`tr[data-approval="${id}"] a`).first().click();
  await page.locator('#approval-meta-h').waitFor();
}

/** Saves a screenshot for the docs, only when asked to (TASKROUTER_SCREENSHOTS_DIR). */
async function shot(page: Page, name: string): Promise<void> {
  const dir = process.env['TASKROUTER_SCREENSHOTS_DIR'];
  if (dir) await page.screenshot({ path: path.join(path.resolve(dir), `${name}.png`), fullPage: true });
}

const statusOf = (page: Page) => page.getByTestId('approval-status').first().textContent();

test('approve: the approver sees the arguments and approves; one call upstream; result by tasks/get and push', async () => {
  const { taskId, id, push } = await ask({ name: 'Ada' });
  try {
    expect(greets('Ada')).toHaveLength(0);
    const page = await signIn(T.ana);
    // The top bar counts the requests waiting for the viewer's decision.
    await pageUntil(async () => (await page.getByTestId('approvals-badge').textContent()) === '1', 'badge 1');
    await page.locator('#approvals-link').click();
    await page.locator(`tr[data-approval="${id}"]`).waitFor();
    await shot(page, 'approvals');
    await openApproval(page, id);
    const args = await page.getByTestId('approval-arguments').textContent();
    expect(JSON.parse(String(args))).toEqual({ name: 'Ada' });
    const field = (name: string) => page.locator(`dd[data-field="${name}"]`).textContent();
    expect(await field('Project')).toBe('guarded');
    expect(await field('Tool')).toBe('greet');
    expect(await field('Policy version')).toBe('v1');
    expect(await field('Arguments digest')).toBe(sha({ name: 'Ada' }));
    expect(await field('Asked by')).toMatch(/API key/);

    await page.getByLabel('Comment').fill('looks right');
    await shot(page, 'approval');
    await page.getByRole('button', { name: 'Approve' }).click();
    await pageUntil(async () => (await statusOf(page)) === 'approved', 'approved');
    expect(await page.locator('#approve').count()).toBe(0);
    expect(await page.locator('dd[data-field="Decisions"]').textContent()).toContain(
      'Approved by ana: looks right',
    );

    const done = await agent().waitForTask(taskId);
    expect(done).toMatchObject({ status: 'completed' });
    expect(JSON.stringify(done.result)).toContain('Hello, Ada!');
    expect(JSON.stringify(await pushed(push, taskId, 'completed'))).toContain('Hello, Ada!');
    expect(greets('Ada').map((c) => c.arguments)).toEqual([{ name: 'Ada' }]);

    // From the request to its task's page.
    await page.getByTestId('approval-task-link').click();
    await page.getByRole('heading', { name: 'greet' }).waitFor();
    await pageUntil(
      async () => (await page.getByTestId('task-status').textContent()) === 'completed',
      'task',
    );
    // Decided requests are under their own tab; the pending tab is empty and the badge gone.
    await page.locator('#approvals-link').click();
    await page.getByRole('heading', { name: 'Approvals' }).waitFor();
    await pageUntil(async () => (await page.locator('tbody tr').count()) === 0, 'no pending rows');
    expect(await page.getByTestId('approvals-badge').isHidden()).toBe(true);
    await page.getByRole('tab', { name: 'Approved' }).click();
    await page.locator(`tr[data-approval="${id}"][data-status="approved"]`).waitFor();
  } finally {
    push.close();
  }
});

test('deny: a comment is required; the task fails saying who denied and why; nothing sent', async () => {
  const { taskId, id, push } = await ask({ name: 'Dee' });
  try {
    const page = await signIn(T.ana);
    await openApproval(page, id);
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.getByRole('alert').filter({ hasText: 'A denial needs a comment' }).waitFor();
    expect(await statusOf(page)).toBe('pending');
    await page.getByLabel('Comment').fill('not today');
    await page.getByRole('button', { name: 'Deny' }).click();
    await pageUntil(async () => (await statusOf(page)) === 'denied', 'denied');
    expect(await page.getByTestId('approval-closed').textContent()).toMatch(/denied/);

    const done = await agent().waitForTask(taskId);
    expect(done).toMatchObject({ status: 'failed' });
    expect(JSON.stringify(done)).toContain('Denied by ana: not today');
    expect(JSON.stringify(await pushed(push, taskId, 'failed'))).toContain('Denied by ana: not today');
    expect(greets('Dee')).toHaveLength(0);
  } finally {
    push.close();
  }
});

test("refusals are shown as the server words them: one's own call; arguments stay text", async () => {
  const own = await gw.clientFor('guarded').withToken(T.ana).callTool('greet', { name: '<img src=x>' });
  expect(own.body.result).toMatchObject({ resultType: 'task', status: 'working' });
  const listed = await dashboard(T.ana, '/v1/approvals?status=pending');
  const mine = (listed.body.approvals as Array<{ id: string; caller: { handle?: string } }>)[0];
  expect(mine?.caller.handle).toBe('ana');
  // Another team sees neither the request nor the list entry.
  expect((await dashboard(T.olga, `/v1/approvals/${mine?.id}`)).status).toBe(404);
  expect((await dashboard(T.olga, '/v1/approvals')).body.approvals).toEqual([]);

  const page = await signIn(T.ana);
  await openApproval(page, String(mine?.id));
  expect(await page.locator('[data-testid="approval-arguments"] img').count()).toBe(0);
  expect(await page.getByTestId('approval-arguments').textContent()).toContain('<img src=x>');
  await page.getByRole('button', { name: 'Approve' }).click();
  await page
    .getByRole('alert')
    .filter({ hasText: /Not allowed: .*own call/ })
    .waitFor();
  expect(await statusOf(page)).toBe('pending');
  // Denying one's own call is allowed (it only withdraws it with a reason).
  await page.getByLabel('Comment').fill('never mind');
  await page.getByRole('button', { name: 'Deny' }).click();
  await pageUntil(async () => (await statusOf(page)) === 'denied', 'denied');
  expect(greets('<img src=x>')).toHaveLength(0);
});

test('a request decided elsewhere meanwhile: the 409 is shown, and the page then shows it decided', async () => {
  const { taskId, id, push } = await ask({ name: 'Twice' });
  push.close();
  const page = await signIn(T.ana);
  await openApproval(page, id);
  // The page keeps seeing the request as pending (its refreshes answered from before) while the
  // request is denied through the API.
  const stale = await dashboard(T.ana, `/v1/approvals/${id}`);
  await page.route(`**/v1/approvals/${id}`, (route) =>
    route.request().method() === 'GET'
      ? route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(stale.body) })
      : route.continue(),
  );
  const denied = await request(
    `${baseUrl}/v1/approvals/${id}/deny`,
    'POST',
    { authorization: `Bearer ${T.ana}` },
    { comment: 'handled elsewhere' },
  );
  expect(denied.status).toBe(200);
  await page.getByRole('button', { name: 'Approve' }).click();
  await page.getByRole('alert').filter({ hasText: 'Already decided or expired: ' }).waitFor();
  expect(await page.locator('#approval-error').textContent()).toMatch(/already denied/);
  await page.unroute(`**/v1/approvals/${id}`);
  await pageUntil(async () => (await statusOf(page)) === 'denied', 'denied');
  // The refusal stays on screen after the buttons went.
  expect(await page.locator('#approval-error').textContent()).toMatch(/already denied/);
  expect(await agent().waitForTask(taskId)).toMatchObject({ status: 'failed' });
  expect(greets('Twice')).toHaveLength(0);
});

test('the project page shows its approval policy read-only, with its version', async () => {
  const page = await signIn(T.ana);
  await page.getByRole('link', { name: /guarded/ }).click();
  const policy = page.getByTestId('approval-policy');
  await policy.waitFor();
  expect(await policy.getByRole('heading').textContent()).toBe('Approval policy (version 1)');
  expect(await policy.textContent()).toContain('greet on every upstream');
  expect(await policy.textContent()).toContain("the project's team");
  expect(await policy.locator('button, input, textarea').count()).toBe(0);
});

test('expiry: the dashboard shows the request expired, offers no buttons; the task fails saying so', async () => {
  const set = await request(
    `${baseUrl}/v1/admin/projects/guarded/approval-policy`,
    'PUT',
    { authorization: `Bearer ${ADMIN}` },
    { rules: [{ tools: ['greet'] }], approvers: { managers: true }, expiresAfterMs: 1500 },
  );
  expect(set.body.version).toBe(2);
  const { taskId, id, push } = await ask({ name: 'Late' });
  try {
    const page = await signIn(T.ana);
    await page.goto(`${baseUrl}/dashboard/#/approvals/${id}`);
    await pageUntil(async () => (await statusOf(page)) === 'expired', 'expired', 20_000);
    expect(await page.locator('#approve, #deny').count()).toBe(0);
    expect(await page.getByTestId('approval-closed').textContent()).toMatch(/expired/);
    expect(await page.locator('dd[data-field="Policy version"]').textContent()).toBe('v2');

    const done = await agent().waitForTask(taskId, undefined, 20_000);
    expect(done).toMatchObject({ status: 'failed' });
    expect(JSON.stringify(done)).toContain('the approval request expired');
    expect(JSON.stringify(await pushed(push, taskId, 'failed'))).toContain('expired');
    // Under the Expired tab of the list, too.
    await page.goto(`${baseUrl}/dashboard/#/approvals?status=expired`);
    await page.locator(`tr[data-approval="${id}"][data-status="expired"]`).waitFor();
    expect(greets('Late')).toHaveLength(0);
  } finally {
    push.close();
  }
});

test('a manager the policy does not name sees the request without arguments or buttons; the named approver decides', async () => {
  const set = await request(
    `${baseUrl}/v1/admin/projects/guarded/approval-policy`,
    'PUT',
    { authorization: `Bearer ${ADMIN}` },
    { rules: [{ tools: ['greet'] }], approvers: { managers: false, teams: ['reviewers'] } },
  );
  expect(set.body.version).toBe(3);
  const { taskId, id, push } = await ask({ name: 'Rita' });
  try {
    expect((await dashboard(T.ana, '/v1/approvals?status=bogus')).status).toBe(400);
    const managerView = (await dashboard(T.ana, `/v1/approvals/${id}`)).body.approval;
    expect(managerView).toMatchObject({ mayDecide: false, policyVersion: 3 });
    expect(managerView.arguments).toBeUndefined();

    const ana = await signIn(T.ana);
    await ana.goto(`${baseUrl}/dashboard/#/approvals/${id}`);
    await ana.getByTestId('approval-closed').waitFor();
    expect(await ana.getByTestId('approval-closed').textContent()).toMatch(/may not decide/);
    expect(await ana.locator('#approve, #deny, [data-testid="approval-arguments"]').count()).toBe(0);
    // Listed for her (a manager), but not hers to decide: no badge, no "your decision" mark.
    await ana.locator('#approvals-link').click();
    await ana.locator(`tr[data-approval="${id}"]`).waitFor();
    expect(await ana.locator(`tr[data-approval="${id}"] .yours`).count()).toBe(0);
    expect(await ana.getByTestId('approvals-badge').isHidden()).toBe(true);

    // Rita is no member of the project: she sees the request and decides, with no link to the task.
    const rita = await signIn(T.rita);
    await pageUntil(async () => (await rita.getByTestId('approvals-badge').textContent()) === '1', 'badge 1');
    await openApproval(rita, id);
    expect(JSON.parse(String(await rita.getByTestId('approval-arguments').textContent()))).toEqual({
      name: 'Rita',
    });
    expect(await rita.getByTestId('approval-task-link').count()).toBe(0);
    await rita.getByRole('button', { name: 'Approve' }).click();
    await pageUntil(async () => (await statusOf(rita)) === 'approved', 'approved');
    expect(await agent().waitForTask(taskId)).toMatchObject({ status: 'completed' });
    expect(JSON.stringify(await pushed(push, taskId, 'completed'))).toContain('Hello, Rita!');
    expect(greets('Rita').map((c) => c.arguments)).toEqual([{ name: 'Rita' }]);
  } finally {
    push.close();
  }
});
