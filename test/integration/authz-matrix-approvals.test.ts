/**
 * The authorization matrix extended to approvals (issue 27, docs/approvals.md): every caller the matrix
 * knows (authz-matrix-gateway.ts) × every approvals operation of the admin API (list, show, approve,
 * deny) on a call waiting in project `secure`, whose policy names its managers (team `core`: alice, tess,
 * dave, frank) and erin (a direct member) by name, and forbids self-approval. Expected, cell by cell:
 * - the approvers (the core team, erin, the admin token) see the request with its arguments and may
 *   decide, except alice on her own call;
 * - everyone else with a user token (bob, carol) learns nothing: not listed, 404 on show and decisions;
 * - API keys, no token and bad tokens are refused by the admin API itself (401);
 * nothing reaches the upstream until the one decision that is allowed, and then exactly once.
 */
import type { Subject } from './authz-matrix-gateway';
import { admin, gw, S, TOKENS, useMatrixGateway } from './authz-matrix-gateway';
import { McpTestClient } from '../helpers/mcp-client';

useMatrixGateway();

type Expect = 'approver' | 'own' | 'hidden' | 'refused';
const WHO: Array<{ who: Subject | { name: string; token?: string }; expect: Expect }> = [
  { who: S.tess, expect: 'approver' },
  { who: { name: 'erin (named approver, direct member)', token: TOKENS.erin }, expect: 'approver' },
  { who: { name: 'the admin token', token: undefined }, expect: 'approver' },
  { who: S.bob, expect: 'hidden' },
  { who: S.carol, expect: 'hidden' },
  { who: S.key1, expect: 'refused' },
  { who: S.keyElsewhere, expect: 'refused' },
  { who: S.noToken, expect: 'refused' },
  { who: S.badToken, expect: 'refused' },
  { who: S.alice, expect: 'own' },
];

function greets(name: string): number {
  return gw.upstream.stats.calls.filter((c) => c.tool === 'greet' && c.arguments.name === name).length;
}

/** The admin API as `token` (the admin token when undefined; no header at all for `none`). */
async function as(token: string | undefined | 'none', method: string, route: string, body?: unknown) {
  if (token !== 'none') return admin(method, route, body, ...(token === undefined ? [] : [token]));
  const base = new URL(gw.client.url).origin;
  const res = await fetch(`${base}/v1/admin${route}`, { method });
  return { status: res.status, body: (await res.json().catch(() => undefined)) as Record<string, unknown> };
}

test(`${WHO.length} callers × 4 approvals operations: only approvers see the arguments or decide`, async () => {
  const set = await admin('PUT', '/projects/secure/approval-policy', {
    rules: [{ tools: ['greet'] }],
    approvers: { managers: true, users: ['erin'] },
  });
  expect(set.status).toBe(200);
  const caller = new McpTestClient(gw.clientFor('secure').url).withToken(TOKENS.alice);
  const created = await caller.callTool('greet', { name: 'Matrix' });
  expect(created.body.result).toMatchObject({ resultType: 'task', status: 'working' });
  const pending = await admin('GET', '/approvals?project=secure&status=pending');
  const id = String((pending.body.approvals as Array<{ id: string }>)[0]?.id);

  const failures: string[] = [];
  let cells = 0;
  for (const { who, expect: e } of WHO) {
    const token =
      'token' in who && who.token !== undefined ? who.token : who === S.noToken ? 'none' : undefined;
    const list = await as(token, 'GET', '/approvals');
    const show = await as(token, 'GET', `/approvals/${id}`);
    const approve = e === 'approver' ? undefined : await as(token, 'POST', `/approvals/${id}/approve`, {});
    // Denying one's own call is allowed (it sends nothing): not tried here, the request must stay open.
    const deny =
      e === 'approver' || e === 'own'
        ? undefined
        : await as(token, 'POST', `/approvals/${id}/deny`, { comment: 'x' });
    cells += e === 'approver' ? 2 : e === 'own' ? 3 : 4;
    const listed = ((list.body?.approvals ?? []) as Array<{ id: string }>).some((a) => a.id === id);
    const problems: string[] = [];
    if (e === 'refused') {
      for (const [op, r] of [
        ['list', list],
        ['show', show],
        ['approve', approve],
        ['deny', deny],
      ] as const)
        if (r?.status !== 401) problems.push(`${op} ${r?.status}`);
    } else if (e === 'hidden') {
      if (listed) problems.push('listed');
      for (const [op, r] of [
        ['show', show],
        ['approve', approve],
        ['deny', deny],
      ] as const)
        if (r?.status !== 404) problems.push(`${op} ${r?.status}`);
    } else {
      if (!listed) problems.push('not listed');
      if (show.status !== 200 || (show.body.arguments as { name?: string })?.name !== 'Matrix')
        problems.push(`show ${show.status} without the arguments`);
      if (e === 'own' && approve?.status !== 403) problems.push(`approving own call ${approve?.status}`);
    }
    if (problems.length > 0) failures.push(`${who.name}: ${problems.join(', ')}`);
  }
  expect(greets('Matrix')).toBe(0);
  console.log(`approvals matrix: ${cells} cells, ${failures.length} failures`);
  expect(failures).toEqual([]);
  // The one allowed decision sends the call exactly once; a second approver is too late.
  expect((await admin('POST', `/approvals/${id}/approve`, {}, TOKENS.tess)).status).toBe(200);
  expect((await admin('POST', `/approvals/${id}/approve`, {}, TOKENS.erin)).status).toBe(409);
  expect((await caller.waitForTask(String(created.body.result?.taskId))).status).toBe('completed');
  expect(greets('Matrix')).toBe(1);
}, 120_000);
