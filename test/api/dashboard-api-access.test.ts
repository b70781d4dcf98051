/**
 * The dashboard's JSON API against the real gateway (Temporal dev server, example upstream over HTTP,
 * SQLite and PostgreSQL), who may use it: tokens, keys and roles at the door, the project picker and
 * upstream status, sessions and CSRF. The other dashboard-api-*.test.ts cover the rest of the roles table
 * (docs/dashboard.md).
 */
import { request, TOKENS } from '../helpers/dashboard';
import { f, t, task, useBoardFixture } from './dashboard-api-fixture';

useBoardFixture();

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
