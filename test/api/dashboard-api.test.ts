/**
 * The dashboard's JSON API against the real gateway (Temporal dev server, example upstream over HTTP,
 * SQLite and PostgreSQL): every role × action cell of the roles table (docs/dashboard.md), sessions and
 * CSRF, groups, counts, the Assigned filter, pagination, assignment, and payload expiry.
 */
import type { DashboardFixture, Who } from '../helpers/dashboard';
import { request, startDashboardFixture, TOKENS, waitForDetail } from '../helpers/dashboard';
import { TASKS_AND_FORM_CAPS } from '../helpers/mcp-client';
import { taskWorkflowId } from '../../src/workflows/messages';

const MARKER = 'quarterly-report-7c1f.txt';
const UI = 'http://temporal-ui.example:8233';

let f: DashboardFixture;
const t: Record<'aliceInput' | 'aliceSlow' | 'aliceDone' | 'bobSlow' | 'keySlow', string> = {
  aliceInput: '',
  aliceSlow: '',
  aliceDone: '',
  bobSlow: '',
  keySlow: '',
};
/** The safe metadata of alice's confirm_delete task while it waits, as every role sees it. */
const ALICE_INPUT_METADATA = {
  tool: 'confirm_delete',
  upstream: 'example',
  caller: { kind: 'user', user: { handle: 'alice' } },
  status: 'input_required',
  statusMessage: 'Waiting for delete confirmation',
  assignee: null,
};
const task = (ref: string, rest = '') => `/v1/projects/board/tasks/${ref}${rest}`;

beforeAll(async () => {
  f = await startDashboardFixture({ temporalUiUrl: UI });
  t.aliceDone = (await f.startTask('alice', 'slow_compute', { seconds: 0, label: 'quick' })).ref;
  t.keySlow = (await f.startTask('key', 'slow_compute', { seconds: 120, label: 'nightly' })).ref;
  t.bobSlow = (await f.startTask('bob', 'slow_compute', { seconds: 120, label: 'bob-job' })).ref;
  t.aliceSlow = (await f.startTask('alice', 'slow_compute', { seconds: 120, label: 'alice-job' })).ref;
  t.aliceInput = (
    await f.startTask('alice', 'confirm_delete', { filename: MARKER }, { capabilities: TASKS_AND_FORM_CAPS })
  ).ref;
  await waitForDetail(f.api('alice'), task(t.aliceDone), (b) => b.task.status === 'completed');
  await waitForDetail(f.api('alice'), task(t.aliceInput), (b) => b.task.status === 'input_required');
});
afterAll(async () => {
  await f?.close();
});

describe('who may use the dashboard', () => {
  test('no token is 401; an API key is 401; a user without a role gets 404 for the project', async () => {
    expect((await request(`${f.baseUrl}/v1/projects/board/tasks`, 'GET', {})).status).toBe(401);
    expect((await f.api('key').get('/v1/projects/board/tasks')).status).toBe(401);
    const olga = await f.api('olga').get('/v1/projects/board/tasks');
    expect(olga.status).toBe(404);
    expect(olga.body.error.message).toBe('No project "board"');
    expect((await f.api('olga').get(task(t.aliceSlow))).status).toBe(404);
    expect((await f.api('olga').get(task(t.aliceSlow, '/timeline'))).status).toBe(404);
  });

  test('the project picker lists projects with the viewer role', async () => {
    expect((await f.api('alice').get('/v1/projects')).body.projects).toEqual([
      { slug: 'board', team: 'core', role: 'team' },
      { slug: 'peruser', team: 'core', role: 'team' },
    ]);
    expect((await f.api('bob').get('/v1/projects')).body.projects).toEqual([
      { slug: 'board', team: 'core', role: 'member' },
      { slug: 'peruser', team: 'core', role: 'member' },
    ]);
    expect((await f.api('olga').get('/v1/projects')).body.projects).toEqual([]);
  });

  test("a project shows its upstreams' probe status, problems included, without URLs", async () => {
    const before = await f.api('bob').get('/v1/projects/board');
    expect(before.body.upstreams).toEqual([
      {
        alias: 'example',
        enabled: true,
        era: 'modern',
        protocolVersion: '2026-07-28',
        probedAt: expect.any(String),
        problem: null,
        credentials: 'none',
      },
    ]);
    // An address nothing listens on: stored, probed at once, and shown with its problem.
    const goneUrl = 'http://127.0.0.1:9/mcp';
    expect((await f.admin('POST', '/projects/board/upstreams', { alias: 'gone', url: goneUrl })).status).toBe(
      201,
    );
    try {
      // Replicas' serving caches follow the change within a check interval.
      let after = await f.api('bob').get('/v1/projects/board');
      const gone = () => (after.body.upstreams as Array<{ alias: string }>).find((u) => u.alias === 'gone');
      for (let i = 0; i < 50 && !gone(); i++) {
        await new Promise((r) => setTimeout(r, 100));
        after = await f.api('bob').get('/v1/projects/board');
      }
      expect(gone()).toMatchObject({
        enabled: true,
        era: null,
        problem: expect.stringContaining('unreachable'),
      });
      expect(JSON.stringify(after.body)).not.toContain(goneUrl);
    } finally {
      await f.admin('DELETE', '/projects/board/upstreams/gone');
    }
  });
});

describe('sessions', () => {
  test('sign-in sets an HttpOnly SameSite=Strict cookie; state changes need the CSRF token', async () => {
    expect((await request(`${f.baseUrl}/v1/session`, 'POST', {}, { token: 'trp_nope' })).status).toBe(401);
    expect((await request(`${f.baseUrl}/v1/session`, 'POST', {}, { token: TOKENS.key })).status).toBe(401);
    const signIn = await request(`${f.baseUrl}/v1/session`, 'POST', {}, { token: TOKENS.alice });
    expect(signIn.status).toBe(200);
    expect(signIn.body.user.handle).toBe('alice');
    const setCookie = signIn.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^taskrouter_session=[A-Za-z0-9_-]{43};/);
    expect(setCookie).toMatch(/httponly/i);
    expect(setCookie).toMatch(/samesite=strict/i);
    expect(setCookie).not.toContain(TOKENS.alice);
    const cookie = { cookie: setCookie.split(';')[0] as string };
    const csrf = String(signIn.body.csrfToken);

    expect((await request(`${f.baseUrl}/v1/session`, 'GET', cookie)).body.user.handle).toBe('alice');
    const list = await request(`${f.baseUrl}/v1/projects/board/tasks`, 'GET', cookie);
    expect(list.status).toBe(200);

    const assign = (headers: Record<string, string>) =>
      request(`${f.baseUrl}${task(t.aliceDone, '/assignee')}`, 'PUT', headers, { assignee: 'tess' });
    const noCsrf = await assign(cookie);
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.body.error.message).toMatch(/CSRF/);
    expect((await assign({ ...cookie, 'x-csrf-token': 'wrong' })).status).toBe(403);
    expect((await f.api('alice').get(task(t.aliceDone))).body.task.assignee).toBeNull();
    expect((await assign({ ...cookie, 'x-csrf-token': csrf })).status).toBe(200);
    expect((await f.api('alice').get(task(t.aliceDone))).body.task.assignee.handle).toBe('tess');

    expect((await request(`${f.baseUrl}/v1/session`, 'DELETE', cookie)).status).toBe(403);
    expect(
      (await request(`${f.baseUrl}/v1/session`, 'DELETE', { ...cookie, 'x-csrf-token': csrf })).status,
    ).toBe(204);
    expect((await request(`${f.baseUrl}/v1/session`, 'GET', cookie)).status).toBe(401);
    await f.api('alice').send('PUT', task(t.aliceDone, '/assignee'), { assignee: null });
  });

  test('cross-origin state changes and sign-ins are refused; strangers get 401 before any body is read', async () => {
    const evil = { origin: 'https://evil.example' };
    expect((await request(`${f.baseUrl}/v1/session`, 'POST', evil, { token: TOKENS.alice })).status).toBe(
      403,
    );
    const signIn = await request(
      `${f.baseUrl}/v1/session`,
      'POST',
      { origin: f.baseUrl },
      { token: TOKENS.alice },
    );
    expect(signIn.status).toBe(200);
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const headers = { cookie, 'x-csrf-token': String(signIn.body.csrfToken), ...evil };
    const assign = await request(`${f.baseUrl}${task(t.aliceDone, '/assignee')}`, 'PUT', headers, {
      assignee: 'tess',
    });
    expect(assign.status).toBe(403);
    expect(assign.body.error.message).toBe('Cross-origin requests are not accepted');
    const stranger = await fetch(`${f.baseUrl}${task(t.aliceDone, '/assignee')}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(stranger.status).toBe(401);
  });

  test('revoking the token a session was opened with ends the session', async () => {
    const created = await f.admin('POST', '/users/tess/tokens', { name: 'short-lived' });
    expect(created.status).toBe(201);
    const signIn = await request(`${f.baseUrl}/v1/session`, 'POST', {}, { token: created.body.token });
    const cookie = { cookie: (signIn.headers.get('set-cookie') ?? '').split(';')[0] as string };
    expect((await request(`${f.baseUrl}/v1/projects`, 'GET', cookie)).status).toBe(200);
    expect((await f.admin('DELETE', `/users/tess/tokens/${created.body.id}`)).status).toBe(200);
    expect((await request(`${f.baseUrl}/v1/projects`, 'GET', cookie)).status).toBe(401);
  });
});

describe('the Tasks view', () => {
  test('team members and direct members list every task, newest first, with counts per group', async () => {
    for (const who of ['alice', 'tess', 'bob'] as Who[]) {
      const reply = await f.api(who).get('/v1/projects/board/tasks');
      expect(reply.status).toBe(200);
      expect(reply.body.tasks.map((x: { ref: string }) => x.ref)).toEqual([
        t.aliceInput,
        t.aliceSlow,
        t.bobSlow,
        t.keySlow,
        t.aliceDone,
      ]);
      expect(reply.body.counts).toEqual({ all: 5, pending: 4, completed: 1, failed: 0, cancelled: 0 });
    }
    const row = (await f.api('bob').get('/v1/projects/board/tasks')).body.tasks[0];
    expect(row).toMatchObject(ALICE_INPUT_METADATA);
    // Metadata only: the arguments and the input request (which names the file) are not in the list.
    expect(JSON.stringify(row)).not.toContain(MARKER);
  });

  test('groups select by status; Pending is working + input_required', async () => {
    const api = f.api('tess');
    const refs = async (q: string) =>
      (await api.get(`/v1/projects/board/tasks?${q}`)).body.tasks.map(
        (x: { ref: string; status: string }) => [x.ref, x.status],
      );
    expect(await refs('group=pending')).toEqual([
      [t.aliceInput, 'input_required'],
      [t.aliceSlow, 'working'],
      [t.bobSlow, 'working'],
      [t.keySlow, 'working'],
    ]);
    expect(await refs('group=completed')).toEqual([[t.aliceDone, 'completed']]);
    expect(await refs('group=failed')).toEqual([]);
    expect((await api.get('/v1/projects/board/tasks?group=done')).status).toBe(400);
    expect((await api.get('/v1/projects/board/tasks?assigned=someone')).status).toBe(400);
  });

  test('pages follow the cursor without repeats; a forged cursor is refused', async () => {
    const api = f.api('alice');
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await api.get(
        `/v1/projects/board/tasks?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(page.body.tasks.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.tasks.map((x: { ref: string }) => x.ref));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual([t.aliceInput, t.aliceSlow, t.bobSlow, t.keySlow, t.aliceDone]);
    expect((await api.get('/v1/projects/board/tasks?cursor=bm9wZQ')).status).toBe(400);
  });
});

describe('detail and timeline: safe metadata for every role', () => {
  test.each(['alice', 'tess', 'bob'] as Who[])('%s sees metadata and the status timeline', async (who) => {
    const detail = await f.api(who).get(task(t.aliceInput));
    expect(detail.status).toBe(200);
    expect(detail.body.task).toMatchObject({ ref: t.aliceInput, ...ALICE_INPUT_METADATA });
    expect(typeof detail.body.task.createdAt).toBe('string');
    expect(typeof detail.body.task.lastUpdatedAt).toBe('string');
    const timeline = await f.api(who).get(task(t.aliceInput, '/timeline'));
    expect(timeline.status).toBe(200);
    expect(timeline.body.timeline.at(-1)).toMatchObject({ kind: 'status', status: 'input_required' });
    expect(detail.body.timeline).toEqual(timeline.body.timeline);
  });

  test('only team members get the workflow link to the Temporal Web UI', async () => {
    const team = (await f.api('tess').get(task(t.keySlow))).body;
    expect(team.workflow.url).toBe(
      `${UI}/namespaces/${f.gw.config.temporal.namespace}/workflows/${team.workflow.id}`,
    );
    expect(team.workflow.id).toMatch(/^task-/);
    expect((await f.api('bob').get(task(t.keySlow))).body.workflow).toBeUndefined();
  });

  test('unknown and malformed task refs are 404', async () => {
    expect((await f.api('alice').get(task('0'.repeat(64)))).status).toBe(404);
    expect((await f.api('alice').get(task('not-a-ref'))).status).toBe(404);
    // A task of another project is not found through this one.
    expect((await f.api('alice').get(`/v1/projects/peruser/tasks/${t.aliceSlow}`)).status).toBe(404);
  });
});

describe('payloads: only the original user caller', () => {
  test('the caller sees arguments and the open input request', async () => {
    const payload = await f.api('alice').get(task(t.aliceInput, '/payload'));
    expect(payload.status).toBe(200);
    expect(payload.body.payload.arguments).toEqual({ filename: MARKER });
    expect(Object.keys(payload.body.payload.inputRequests)).toEqual(['confirm']);
    const detail = (await f.api('alice').get(task(t.aliceInput))).body;
    expect(detail.payload.visible).toBe(true);
    expect(detail.controls).toEqual({ assign: true, cancel: true, answer: true });
  });

  test.each([
    ['tess', 'aliceInput', 'not_caller'],
    ['bob', 'aliceInput', 'not_caller'],
    ['alice', 'bobSlow', 'not_caller'],
    ['alice', 'keySlow', 'api_key'],
    ['tess', 'keySlow', 'api_key'],
    ['bob', 'keySlow', 'api_key'],
  ] as Array<[Who, keyof typeof t, string]>)('%s on %s: hidden (%s)', async (who, name, reason) => {
    const payload = await f.api(who).get(task(t[name], '/payload'));
    expect(payload.status).toBe(403);
    expect(payload.body.error.code).toBe(reason);
    const detail = await f.api(who).get(task(t[name]));
    expect(detail.body.payload).toMatchObject({ visible: false, reason });
    expect(detail.body.controls.cancel).toBe(false);
    expect(detail.body.controls.answer).toBe(false);
    expect(JSON.stringify(detail.body)).not.toContain(MARKER);
  });

  test('a direct member sees the payload of a task they started themselves', async () => {
    const payload = await f.api('bob').get(task(t.bobSlow, '/payload'));
    expect(payload.status).toBe(200);
    expect(payload.body.payload.arguments).toEqual({ seconds: 120, label: 'bob-job' });
    expect((await f.api('bob').get(task(t.bobSlow))).body.controls).toEqual({
      assign: false,
      cancel: true,
      answer: false,
    });
  });
});

describe('assignment: team members only, and it grants nothing', () => {
  test('a direct member cannot assign', async () => {
    const reply = await f.api('bob').send('PUT', task(t.aliceSlow, '/assignee'), { assignee: 'bob' });
    expect(reply.status).toBe(403);
    const detail = (await f.api('bob').get(task(t.aliceSlow))).body;
    expect(detail.task.assignee).toBeNull();
    expect(detail.controls.assign).toBe(false);
  });

  test('assign, reassign and unassign show in the timeline; the status never changes', async () => {
    const before = (await f.api('alice').get(task(t.aliceInput))).body;
    expect(
      (await f.api('alice').send('PUT', task(t.aliceInput, '/assignee'), { assignee: 'bob' })).body,
    ).toEqual({
      assignee: { handle: 'bob', name: 'Bob' },
    });
    expect(
      (await f.api('tess').send('PUT', task(t.aliceInput, '/assignee'), { assignee: 'tess' })).status,
    ).toBe(200);
    const after = (await f.api('bob').get(task(t.aliceInput))).body;
    expect(after.task.status).toBe(before.task.status);
    expect(after.task.assignee.handle).toBe('tess');
    expect(after.timeline.slice(-2)).toEqual([
      expect.objectContaining({
        kind: 'assignment',
        by: { handle: 'alice', name: 'Alice' },
        assignee: { handle: 'bob', name: 'Bob' },
      }),
      expect.objectContaining({
        kind: 'assignment',
        by: { handle: 'tess', name: 'Tess' },
        assignee: { handle: 'tess', name: 'Tess' },
      }),
    ]);
    // Each change is in the project's audit trail, by whom and to whom; a repeat writes nothing.
    expect(
      (await f.api('tess').send('PUT', task(t.aliceInput, '/assignee'), { assignee: 'tess' })).status,
    ).toBe(200);
    const audit = (await f.admin('GET', '/projects/board/audit')).body.events as Array<{
      action: string;
      detail?: { workflowId?: string; assignee?: string };
    }>;
    const ofTask = audit.filter(
      (e) => e.action === 'task.assigned' && e.detail?.workflowId === taskWorkflowId(t.aliceInput),
    );
    expect(ofTask).toHaveLength(2);
    expect(after.timeline.filter((e: { kind: string }) => e.kind === 'assignment')).toHaveLength(2);
    // The MCP view of the task is untouched.
    expect(after.timeline.filter((e: { kind: string }) => e.kind === 'status')).toEqual(
      before.timeline.filter((e: { kind: string }) => e.kind === 'status'),
    );
  });

  test('Assigned filter: tasks with a human assignee, and "assigned to me"', async () => {
    await f.api('alice').send('PUT', task(t.keySlow, '/assignee'), { assignee: 'bob' });
    const any = (await f.api('bob').get('/v1/projects/board/tasks?assigned=any')).body;
    expect(any.tasks.map((x: { ref: string }) => x.ref)).toEqual([t.aliceInput, t.keySlow]);
    expect(any.counts).toEqual({ all: 2, pending: 2, completed: 0, failed: 0, cancelled: 0 });
    const mine = (await f.api('bob').get('/v1/projects/board/tasks?assigned=me')).body;
    expect(mine.tasks.map((x: { ref: string }) => x.ref)).toEqual([t.keySlow]);
    expect(
      (await f.api('tess').get('/v1/projects/board/tasks?assigned=me&group=pending')).body.tasks,
    ).toHaveLength(1);
  });

  test('assigning grants neither the payload nor the controls', async () => {
    // bob is the assignee of an API-key task and (above) was of alice's task.
    await f.api('alice').send('PUT', task(t.aliceSlow, '/assignee'), { assignee: 'bob' });
    for (const name of ['keySlow', 'aliceSlow'] as const) {
      expect((await f.api('bob').get(task(t[name], '/payload'))).status).toBe(403);
      expect((await f.api('bob').send('POST', task(t[name], '/cancel'))).status).toBe(403);
    }
  });

  test('only people with access to the project can be assignees; bad bodies are refused', async () => {
    const api = f.api('alice');
    const olga = await api.send('PUT', task(t.aliceDone, '/assignee'), { assignee: 'olga' });
    expect(olga.status).toBe(400);
    expect(olga.body.error.message).toBe('"olga" cannot access project "board"');
    expect((await api.send('PUT', task(t.aliceDone, '/assignee'), { assignee: 3 })).status).toBe(400);
    expect((await api.send('PUT', task(t.aliceDone, '/assignee'), { who: 'bob' })).status).toBe(400);
    const raw = await fetch(`${f.baseUrl}${task(t.aliceDone, '/assignee')}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TOKENS.alice}`, 'content-type': 'application/json' },
      body: '{"assignee":',
    });
    expect(raw.status).toBe(400);
    const huge = await api.send('PUT', task(t.aliceDone, '/assignee'), { assignee: 'x'.repeat(300_000) });
    expect(huge.status).toBe(413);
    expect((await api.send('PUT', task(t.aliceDone, '/assignee'), { assignee: null })).status).toBe(200);
    expect((await api.send('DELETE', task(t.aliceDone, '/assignee'))).status).toBe(405);
  });
});

describe('protocol controls: the original user caller only, through the tasks/update and tasks/cancel path', () => {
  test('others cannot answer input or cancel; nothing reaches the upstream', async () => {
    const updates = f.gw.upstream.stats.tasksUpdate;
    const cancels = f.gw.upstream.stats.tasksCancel;
    const answer = { inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } };
    for (const who of ['tess', 'bob'] as Who[]) {
      expect((await f.api(who).send('POST', task(t.aliceInput, '/input'), answer)).status).toBe(403);
      expect((await f.api(who).send('POST', task(t.aliceSlow, '/cancel'))).status).toBe(403);
    }
    for (const who of ['alice', 'tess', 'bob'] as Who[]) {
      expect((await f.api(who).send('POST', task(t.keySlow, '/cancel'))).status).toBe(403);
    }
    expect((await f.api('olga').send('POST', task(t.aliceSlow, '/cancel'))).status).toBe(404);
    expect(f.gw.upstream.stats.tasksUpdate).toBe(updates);
    expect(f.gw.upstream.stats.tasksCancel).toBe(cancels);
    expect((await f.api('alice').get(task(t.aliceSlow))).body.task.status).toBe('working');
  });

  test('the caller answers the elicitation and the task completes with the answer', async () => {
    const api = f.api('alice');
    expect((await api.send('POST', task(t.aliceInput, '/input'), { inputResponses: {} })).status).toBe(400);
    expect(
      (
        await api.send('POST', task(t.aliceInput, '/input'), {
          inputResponses: { confirm: { action: 'maybe' } },
        })
      ).status,
    ).toBe(400);
    const reply = await api.send('POST', task(t.aliceInput, '/input'), {
      inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
    });
    expect(reply.status).toBe(202);
    const done = await waitForDetail(api, task(t.aliceInput), (b) => b.task.status === 'completed');
    expect(done.payload.result.content[0].text).toBe(`Confirmed: deleted ${MARKER}`);
    expect(done.controls).toEqual({ assign: true, cancel: false, answer: false });
  });

  test('a direct member cancels their own task; the caller cancels theirs', async () => {
    const cancels = f.gw.upstream.stats.tasksCancel;
    expect((await f.api('bob').send('POST', task(t.bobSlow, '/cancel'))).status).toBe(202);
    expect((await f.api('alice').send('POST', task(t.aliceSlow, '/cancel'))).status).toBe(202);
    await waitForDetail(f.api('bob'), task(t.bobSlow), (b) => b.task.status === 'cancelled');
    await waitForDetail(f.api('alice'), task(t.aliceSlow), (b) => b.task.status === 'cancelled');
    expect(f.gw.upstream.stats.tasksCancel).toBe(cancels + 2);
    // Cancelling a finished task changes nothing and is refused as a control that no longer applies.
    expect((await f.api('alice').send('POST', task(t.aliceSlow, '/cancel'))).status).toBe(403);
  });
});

describe('the original caller after their upstream authorization is revoked', () => {
  test('payload hidden and controls refused; the upstream hears nothing', async () => {
    const grant = await f.admin('PUT', '/projects/peruser/upstreams/example/authorization', {
      user: 'alice',
      credential: 'alice-upstream-secret',
    });
    expect(grant.status).toBe(200);
    const { ref } = await f.startTask(
      'alice',
      'slow_compute',
      { seconds: 120, label: 'per-user' },
      {
        project: 'peruser',
      },
    );
    const route = `/v1/projects/peruser/tasks/${ref}`;
    expect((await f.api('alice').get(`${route}/payload`)).status).toBe(200);
    expect((await f.api('alice').get(route)).body.controls.cancel).toBe(true);

    const revoke = await f.admin('DELETE', '/projects/peruser/upstreams/example/authorization?user=alice');
    expect(revoke.status).toBe(200);
    const cancels = f.gw.upstream.stats.tasksCancel;
    const payload = await f.api('alice').get(`${route}/payload`);
    expect(payload.status).toBe(403);
    expect(payload.body.error.code).toBe('authorization_invalid');
    const detail = (await f.api('alice').get(route)).body;
    expect(detail.payload).toMatchObject({ visible: false, reason: 'authorization_invalid' });
    expect(detail.controls).toEqual({ assign: true, cancel: false, answer: false });
    expect(detail.task.status).toBe('working'); // metadata stays visible
    const cancel = await f.api('alice').send('POST', `${route}/cancel`);
    expect(cancel.status).toBe(403);
    expect(cancel.body.error.message).toMatch(/authorization/);
    expect(f.gw.upstream.stats.tasksCancel).toBe(cancels);
  });
});

describe('metadata lifetime', () => {
  test('after payload expiry the dashboard says so, and the metadata and timeline stay', async () => {
    // Payload retention with a cutoff in the future: every finished task's payload expires.
    await f.gw.runtime().store.purgePayloadsBefore(new Date(Date.now() + 60_000).toISOString(), 1000);
    const detail = await f.api('alice').get(task(t.aliceDone));
    expect(detail.status).toBe(200);
    expect(detail.body.task).toMatchObject({
      tool: 'slow_compute',
      status: 'completed',
      payloadExpired: true,
    });
    expect(detail.body.payload).toMatchObject({ visible: false, reason: 'expired' });
    expect(detail.body.payload.message).toMatch(/payload has expired/);
    expect(detail.body.timeline.length).toBeGreaterThan(0);
    const payload = await f.api('alice').get(task(t.aliceDone, '/payload'));
    expect(payload.status).toBe(410);
    expect(payload.body.error.code).toBe('expired');
    // Others still get their own reason, not "expired".
    expect((await f.api('tess').get(task(t.aliceDone, '/payload'))).body.error.code).toBe('not_caller');
  });
});

describe('losing project access', () => {
  test('a caller removed from the project sees nothing of it, their own tasks included', async () => {
    const { ref } = await f.startTask('bob', 'slow_compute', { seconds: 120, label: 'bob-later' });
    expect((await f.api('bob').get(task(ref, '/payload'))).status).toBe(200);
    expect((await f.admin('DELETE', '/projects/board/members/bob')).status).toBe(204);
    const cancels = f.gw.upstream.stats.tasksCancel;
    for (const route of [
      task(ref),
      task(ref, '/payload'),
      task(ref, '/timeline'),
      '/v1/projects/board/tasks',
    ]) {
      expect((await f.api('bob').get(route)).status).toBe(404);
    }
    expect((await f.api('bob').send('POST', task(ref, '/cancel'))).status).toBe(404);
    expect(f.gw.upstream.stats.tasksCancel).toBe(cancels);
    // The team still sees the task. (Whether it is still working depends on timing: bob's upstream
    // credential no longer resolves, so the next poll ends it as failed.)
    const seen = await f.api('tess').get(task(ref));
    expect(seen.status).toBe(200);
    expect(['working', 'failed']).toContain(seen.body.task.status);
  });
});
