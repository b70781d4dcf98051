/**
 * The admin API over real HTTP: a bare Koa app with only the admin middleware, listening on port 0, over
 * the database under test.
 */
import { createHash } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import type { Kysely } from 'kysely';
import { adminApi } from '../../src/api/admin';
import { Cipher, generateKey } from '../../src/store/cipher';
import { ControlPlaneStore } from '../../src/store/control-plane';
import { openDatabase } from '../../src/store/database';
import type { Database } from '../../src/store/schema';
import { testStoreConfig } from '../helpers/store';

const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';
const MARKER = 'MARKER-admin-api-credential-93be';

let db: Kysely<Database>;
let server: Server;
let base: string;
let cp: ControlPlaneStore;
const tokens: Record<string, string> = {};

interface Reply {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
  headers: Headers;
}

async function call(
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; contentType?: string } = {},
): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (opts.token !== undefined) headers['authorization'] = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = opts.contentType ?? 'application/json';
  const res = await fetch(`${base}/v1/admin${path}`, {
    method,
    headers,
    ...(opts.body !== undefined && {
      body: typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body),
    }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, text, headers: res.headers };
}

const as = (who: string) => ({
  get: (path: string) => call('GET', path, { token: tokens[who] }),
  post: (path: string, body: unknown = {}) => call('POST', path, { token: tokens[who], body }),
  patch: (path: string, body: unknown) => call('PATCH', path, { token: tokens[who], body }),
  put: (path: string, body: unknown) => call('PUT', path, { token: tokens[who], body }),
  del: (path: string) => call('DELETE', path, { token: tokens[who] }),
});

beforeAll(async () => {
  db = await openDatabase(await testStoreConfig());
  cp = new ControlPlaneStore(db, new Cipher({ activeKeyId: 'k1', keys: { k1: generateKey() } }));
  const app = new Koa();
  app.use(adminApi({ controlPlane: cp, adminToken: ADMIN_TOKEN }));
  app.use((ctx) => {
    ctx.status = 418;
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  tokens['admin'] = ADMIN_TOKEN;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await db?.destroy();
});

describe('authentication', () => {
  it('requires a bearer token: admin token or user token, never an API key', async () => {
    const none = await call('GET', '/teams');
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await call('GET', '/teams', { token: `${ADMIN_TOKEN}x` })).status).toBe(401);
    expect((await call('GET', '/teams', { token: 'trp_unknownunknownunknownunknown' })).status).toBe(401);
    expect((await call('GET', '/teams', { token: ADMIN_TOKEN })).status).toBe(200);
    // Unknown routes are not revealed before authentication.
    expect((await call('GET', '/nope')).status).toBe(401);
    expect((await call('GET', '/nope', { token: ADMIN_TOKEN })).status).toBe(404);
  });

  it('leaves other paths to the next middleware', async () => {
    expect((await fetch(`${base}/v1/mcp/x`)).status).toBe(418);
    expect((await fetch(`${base}/v1/administrator`)).status).toBe(418);
  });
});

describe('administration', () => {
  it('the admin sets up teams, users and tokens; tokens are shown once', async () => {
    const admin = as('admin');
    expect((await admin.post('/teams', { slug: 'core', name: 'Core' })).status).toBe(201);
    expect((await admin.post('/teams', { slug: 'other', name: 'Other' })).status).toBe(201);
    for (const handle of ['alice', 'bob', 'carol']) {
      const created = await admin.post('/users', { handle, name: handle });
      expect(created.status).toBe(201);
      const issued = await admin.post(`/users/${handle}/tokens`, { name: 'test' });
      expect(issued.status).toBe(201);
      expect(issued.body.token).toMatch(/^trp_[A-Za-z0-9_-]{43}$/);
      tokens[handle] = issued.body.token as string;
      const listed = await admin.get(`/users/${handle}/tokens`);
      expect(listed.body.tokens).toHaveLength(1);
      expect(listed.text).not.toContain(issued.body.token);
      expect(listed.text).not.toContain(createHash('sha256').update(issued.body.token).digest('hex'));
    }
    expect((await admin.post('/teams/core/members', { user: 'alice' })).status).toBe(201);
    expect((await admin.post('/teams/core/members', { user: 'alice' })).status).toBe(200); // already
    expect((await admin.post('/teams/other/members', { user: 'carol' })).status).toBe(201);
    expect((await admin.post('/projects', { slug: 'alpha', team: 'core' })).status).toBe(201);
    expect((await as('alice').post('/projects/alpha/members', { user: 'bob' })).status).toBe(201);
  });

  it('validates bodies and reports conflicts and unknown resources', async () => {
    const admin = as('admin');
    const invalid = await admin.post('/projects', { slug: 'Bad!', team: 'core' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.code).toBe('invalid');
    expect((await admin.post('/projects', { slug: 'x', team: 'core', extra: 1 })).status).toBe(400);
    expect((await admin.post('/teams', { slug: 'core', name: 'dup' })).body.error.code).toBe('conflict');
    expect((await admin.post('/teams', { slug: 'core', name: 'dup' })).status).toBe(409);
    const missing = await admin.get('/projects/nope');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: { code: 'not_found', message: 'No project "nope"' } });
    expect((await call('POST', '/teams', { token: ADMIN_TOKEN, body: '{not json' })).status).toBe(400);
    expect((await call('POST', '/teams', { token: ADMIN_TOKEN, body: '[]' })).status).toBe(400);
    expect(
      (await call('POST', '/teams', { token: ADMIN_TOKEN, body: 'a=b', contentType: 'text/plain' })).status,
    ).toBe(415);
    const wrongMethod = await call('PUT', '/teams', { token: ADMIN_TOKEN, body: {} });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET, POST');
  });
});

describe('roles', () => {
  it('a team member can change their team’s project', async () => {
    const res = await as('alice').patch('/projects/alpha', {
      features: { tasks: false },
      limits: { overflow: 'error' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      slug: 'alpha',
      features: { tasks: false },
      limits: { overflow: 'error' },
    });
    expect((await as('alice').get('/projects/alpha')).status).toBe(200);
  });

  it('a direct project member cannot change the project (403) but can call it', async () => {
    const bob = as('bob');
    for (const res of [
      await bob.patch('/projects/alpha', { namespacing: false }),
      await bob.get('/projects/alpha'),
      await bob.post('/projects/alpha/keys', { name: 'k' }),
      await bob.post('/projects/alpha/upstreams', { alias: 'x', url: 'http://127.0.0.1:9/mcp' }),
      await bob.post('/projects/alpha/members', { user: 'carol' }),
      await bob.del('/projects/alpha'),
      await bob.get('/projects/alpha/audit'),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
    }
    const project = (await cp.projectBySlug('alpha'))!;
    const principal = (await cp.authenticate(tokens['bob']!))!;
    expect(await cp.canCallProject(principal, project)).toBe(true);
    const me = await bob.get('/me');
    expect(me.body.user.projects).toEqual([{ id: project.id, slug: 'alpha', role: 'direct' }]);
  });

  it('a user of another team can neither change nor call the project', async () => {
    const carol = as('carol');
    expect((await carol.patch('/projects/alpha', { namespacing: false })).status).toBe(403);
    expect((await carol.post('/teams/core/members', { user: 'carol' })).status).toBe(403);
    expect((await carol.get('/users/alice/tokens')).status).toBe(403);
    const project = (await cp.projectBySlug('alpha'))!;
    expect(await cp.canCallProject((await cp.authenticate(tokens['carol']!))!, project)).toBe(false);
    // Users cannot create teams or users.
    expect((await carol.post('/teams', { slug: 'mine', name: 'Mine' })).status).toBe(403);
    expect((await carol.post('/users', { handle: 'eve', name: 'Eve' })).status).toBe(403);
  });
});

describe('keys, upstreams and authorizations', () => {
  it('API keys are shown once and cannot be used on the admin API', async () => {
    const created = await as('alice').post('/projects/alpha/keys', { name: 'ci' });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^trk_/);
    const listed = await as('alice').get('/projects/alpha/keys');
    expect(listed.text).not.toContain(created.body.key);
    const denied = await call('GET', '/me', { token: created.body.key as string });
    expect(denied.status).toBe(401);
    expect(denied.body.error.message).toMatch(/API keys/);
    const revoked = await as('alice').del(`/projects/alpha/keys/${created.body.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.revokedAt).not.toBeNull();
    expect(await cp.authenticate(created.body.key as string)).toBeUndefined();
  });

  it('upstream credentials are accepted but never returned', async () => {
    const alice = as('alice');
    const added = await alice.post('/projects/alpha/upstreams', {
      alias: 'vault',
      url: 'http://127.0.0.1:9/vault',
      auth: { mode: 'project', header: 'X-Api-Key', credential: MARKER },
    });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({
      alias: 'vault',
      auth: { mode: 'project', header: 'X-Api-Key' },
      credentialSet: true,
    });
    expect(added.text).not.toContain(MARKER);
    expect((await alice.get('/projects/alpha')).text).not.toContain(MARKER);
    expect((await alice.get('/projects/alpha/upstreams')).text).not.toContain(MARKER);
    const patched = await alice.patch('/projects/alpha/upstreams/vault', { enabled: false });
    expect(patched.body.enabled).toBe(false);
    expect(
      (
        await alice.post('/projects/alpha/upstreams', {
          alias: 'gh',
          url: 'http://127.0.0.1:9/gh',
          auth: { mode: 'per_user' },
        })
      ).status,
    ).toBe(201);
  });

  it('a user grants and revokes their own upstream authorization', async () => {
    const bob = as('bob');
    const granted = await bob.put('/projects/alpha/upstreams/gh/authorization', {
      credential: `${MARKER}-bob`,
    });
    expect(granted.status).toBe(200);
    expect(granted.body).toMatchObject({ status: 'active', upstreamAlias: 'gh' });
    expect(granted.text).not.toContain(MARKER);
    // Not on someone else's behalf (only the admin grants for others).
    expect(
      (await as('alice').put('/projects/alpha/upstreams/gh/authorization', { credential: 'x', user: 'bob' }))
        .status,
    ).toBe(403);
    // Carol has no access to the project, so she cannot grant one.
    expect(
      (await as('carol').put('/projects/alpha/upstreams/gh/authorization', { credential: 'x' })).status,
    ).toBe(403);
    const mine = await bob.get('/projects/alpha/authorizations');
    expect(mine.body.authorizations).toHaveLength(1);
    const revoked = await bob.del('/projects/alpha/upstreams/gh/authorization');
    expect(revoked.status).toBe(200);
    expect(revoked.body.status).toBe('revoked');
    expect((await bob.del('/projects/alpha/upstreams/gh/authorization')).status).toBe(404);
  });

  it('users manage their own tokens', async () => {
    const bob = as('bob');
    const issued = await bob.post('/users/me/tokens', { name: 'second' });
    expect(issued.status).toBe(201);
    expect((await call('GET', '/me', { token: issued.body.token as string })).status).toBe(200);
    expect((await as('carol').del(`/users/bob/tokens/${issued.body.id}`)).status).toBe(403);
    expect((await bob.del(`/users/me/tokens/${issued.body.id}`)).status).toBe(200);
    expect((await call('GET', '/me', { token: issued.body.token as string })).status).toBe(401);
  });
});

describe('audit and deletion', () => {
  it('team members read their project’s audit trail; the admin reads everything', async () => {
    const trail = await as('alice').get('/projects/alpha/audit?limit=500');
    expect(trail.status).toBe(200);
    const actions = (trail.body.events as { action: string }[]).map((e) => e.action);
    expect(actions).toEqual(
      expect.arrayContaining([
        'project.created',
        'project.member_added',
        'api_key.created',
        'api_key.revoked',
        'upstream.added',
        'authorization.granted',
        'authorization.revoked',
        'access.denied',
      ]),
    );
    expect(trail.text).not.toContain(MARKER);
    expect((await as('admin').get('/audit?limit=5')).body.events).toHaveLength(5);
    expect((await as('alice').get('/audit')).status).toBe(403);
    // Filtering the instance-wide trail to a project they manage is still the administrator's.
    expect((await as('alice').get('/audit?project=alpha')).status).toBe(403);
  });

  it('a team member deletes the project', async () => {
    expect((await as('alice').del('/projects/alpha')).status).toBe(204);
    expect((await as('alice').get('/projects/alpha')).status).toBe(404);
    expect(await cp.projectBySlug('alpha')).toBeUndefined();
  });
});
