/**
 * Per-upstream OAuth (docs/oauth.md, "Connecting upstreams"), against real parts: an OpenID provider
 * (oidc-provider in a child process) that offers no dynamic registration, only a client registered
 * beforehand; the upstream, a second TaskRouter gateway whose project takes that provider's access
 * tokens (no clock tolerance, 4-second tokens); and the gateway under test, where only the upstream
 * whose configuration says `auth.oauth` is connected with OAuth, with the configured client.
 *
 * Covers: the per-upstream switch, configured client credentials, tasks that outlive their access token
 * or lose their connection mid-task, "Disconnect" in a real browser revoking the tokens at the provider
 * (RFC 7009, checked with the provider's own introspection), the admin's revocation doing the same, a
 * failed revocation, and that the tokens reach no log, Temporal history, search attribute, memo or
 * database column in plaintext.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { Client as Sdk1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import { launchChromium, watchPage } from '../helpers/browser';
import type { TestGateway } from '../helpers/gateway';
import { TASKS_AND_FORM_CAPS } from '../helpers/mcp-client';
import type { OidcProvider } from '../helpers/oidc';
import { followAuthorization, cookieOf, dashboardSession } from '../helpers/oidc';
import { startHostileUpstream } from '../helpers/hostile-upstream';
import { taskKeyOf } from '../../src/store/tasks/task-store';
import { taskWorkflowId } from '../../src/workflows/messages';
import { ADMIN, CLIENT, startOAuthConnectWorld, TOKENS } from './upstream-oauth-connect-fixture';

let idp: OidcProvider;
let upstreamGw: TestGateway;
let gw: TestGateway;
let a: string;
let b: string;
const logs: string[] = [];
const taskIds: string[] = [];

beforeAll(async () => {
  ({ idp, upstreamGw, gw, a, b } = await startOAuthConnectWorld(logs));
}, 120_000);
afterAll(async () => {
  await gw?.close();
  await upstreamGw?.close();
  await idp?.close();
});

/** A dashboard session cookie for `who`. */
const signIn = (who: keyof typeof TOKENS): Promise<string> => dashboardSession(a, TOKENS[who]);

/** Connects `tracker` for alice through the provider (as a browser would, following redirects). */
async function connectAlice(): Promise<URL> {
  const session = await signIn('alice');
  const res = await fetch(`${a}/v1/connect/front/tracker`, {
    headers: { cookie: session },
    redirect: 'manual',
  });
  expect(res.status).toBe(302);
  const asked = new URL(String(res.headers.get('location')));
  const callback = await followAuthorization(asked.toString(), 'alice', `${a}/v1/connect/callback`);
  const done = await fetch(callback, {
    headers: { cookie: `${session}; ${cookieOf(res, 'taskrouter_connect')}` },
    redirect: 'manual',
  });
  expect(done.status).toBe(302);
  return asked;
}

const front = (who: keyof typeof TOKENS) => gw.clientFor('front').withToken(TOKENS[who]);
const greet = (who: keyof typeof TOKENS) =>
  front(who).callTool('tracker.greet', { name: who }, { tasks: false });

async function aliceAuthorization(): Promise<{ id: string; expiresAt: string; status: string }> {
  const res = await fetch(`${a}/v1/admin/projects/front/authorizations`, {
    headers: { authorization: `Bearer ${TOKENS.alice}` },
  });
  const body = (await res.json()) as {
    authorizations: Array<{ id: string; expiresAt: string; status: string }>;
  };
  return body.authorizations.at(-1) as { id: string; expiresAt: string; status: string };
}

/** The refresh token the provider issued last (alice is the only one who connects here). */
async function latestRefreshToken(): Promise<string> {
  const refresh = (await idp.issued()).map((t) => t.refresh).filter((r): r is string => r !== null);
  expect(refresh.length).toBeGreaterThan(0);
  return refresh.at(-1) as string;
}

test('only the upstream whose configuration says so is connected with OAuth; the admin API shows the client, never its secret', async () => {
  const listed = await fetch(`${a}/v1/projects/front/connections`, {
    headers: { authorization: `Bearer ${TOKENS.alice}` },
  });
  expect(listed.status).toBe(200);
  const { connections } = (await listed.json()) as { connections: Array<{ alias: string; status: string }> };
  expect(connections.map((c) => c.alias)).toEqual(['tracker']);

  const session = await signIn('alice');
  const plain = await fetch(`${a}/v1/connect/front/plain`, {
    headers: { cookie: session },
    redirect: 'manual',
  });
  expect(plain.status).toBe(400);
  expect(await plain.text()).toContain('not connected with OAuth');

  // Errors name where to connect only for the upstream that can be connected.
  const plainCall = await front('alice').callTool('plain.greet', { name: 'alice' }, { tasks: false });
  expect(plainCall.body.error?.message).toContain('Upstream "plain" needs your authorization; none granted');
  expect(plainCall.body.error?.message).not.toContain('connect it at');
  expect((await greet('alice')).body.error?.message).toContain(
    `none granted; connect it at ${a}/v1/connect/front/tracker`,
  );

  const res = await fetch(`${a}/v1/admin/projects/front/upstreams`, {
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  const text = await res.text();
  expect(text).not.toContain(CLIENT.secret);
  const upstreams = JSON.parse(text) as { upstreams?: unknown[] } | unknown[];
  const list = (Array.isArray(upstreams) ? upstreams : upstreams.upstreams) as Array<{
    alias: string;
    auth: unknown;
  }>;
  expect(list.find((u) => u.alias === 'tracker')?.auth).toEqual({
    mode: 'per_user',
    oauth: { clientId: CLIENT.id, clientSecretSet: true, registration: 'configured' },
  });
  expect(list.find((u) => u.alias === 'plain')?.auth).toEqual({ mode: 'per_user' });
});

test('an authorization server without dynamic registration: the configured client connects', async () => {
  const metadata = (await (await fetch(`${idp.issuer}/.well-known/openid-configuration`)).json()) as Record<
    string,
    unknown
  >;
  expect(metadata['registration_endpoint']).toBeUndefined();
  const asked = await connectAlice();
  expect(asked.searchParams.get('client_id')).toBe(CLIENT.id);
  const reply = await greet('alice');
  expect(reply.body.error).toBeUndefined();
  expect(JSON.stringify(reply.body.result)).toContain('alice');
});

test('a task that outlives its access token renews the connection in place and completes', async () => {
  const before = await aliceAuthorization();
  const issuedBefore = (await idp.issued()).length;
  const created = await front('alice').callTool(
    'tracker.slow_compute',
    { seconds: 6, label: 'outlives' },
    { capabilities: TASKS_AND_FORM_CAPS },
  );
  const taskId = String(created.body.result?.taskId);
  expect(created.body.error).toBeUndefined();
  taskIds.push(taskId);
  // Every access token lives 4 s; the upstream refuses an expired one. The task runs 6 s.
  const done = await front('alice').waitForTask(taskId, undefined, 60_000);
  expect(done.status).toBe('completed');
  expect(JSON.stringify(done)).toContain('outlives');
  const after = await aliceAuthorization();
  expect(after.id).toBe(before.id);
  expect(after.status).toBe('active');
  expect(new Date(after.expiresAt).getTime()).toBeGreaterThan(new Date(before.expiresAt).getTime() + 4000);
  expect((await idp.issued()).length).toBeGreaterThan(issuedBefore);
});

test('a task whose connection can no longer be renewed follows the "authorization withdrawn" rules', async () => {
  const created = await front('alice').callTool(
    'tracker.slow_compute',
    { seconds: 60, label: 'withdrawn' },
    { capabilities: TASKS_AND_FORM_CAPS },
  );
  const taskId = String(created.body.result?.taskId);
  taskIds.push(taskId);
  await front('alice').waitForTask(taskId, (s) => s === 'working');
  // The provider ends the grant: the next renewal is refused, and the access token runs out. (Again on
  // each round: a renewal under way when the tokens are destroyed may have got one more.)
  let refusal: { code?: number; message?: string } | undefined;
  for (let i = 0; i < 120 && !refusal; i++) {
    await idp.revokeIssued();
    refusal = (await front('alice').getTask(taskId)).body.error;
    if (!refusal) await new Promise((r) => setTimeout(r, 250));
  }
  expect(refusal).toMatchObject({ code: -31009, message: expect.stringContaining('"tracker"') });
  const cancel = await front('alice').request('tasks/cancel', { taskId });
  expect(cancel.body.error).toMatchObject({ code: -31009 });
  expect((await greet('alice')).body.error?.message).toMatch(
    new RegExp(`yours expired at .*; connect it at ${a}/v1/connect/front/tracker`),
  );
  expect((await aliceAuthorization()).status).toBe('expired');
});

test('"Disconnect" in the dashboard (a real browser) revokes the tokens at the provider; calls ask to connect again', async () => {
  await connectAlice();
  expect((await greet('alice')).body.error).toBeUndefined();
  const refresh = await latestRefreshToken();
  expect((await idp.introspect(refresh, CLIENT)).active).toBe(true);

  const browser = await launchChromium();
  try {
    const page = await (await browser.newContext()).newPage();
    const seen = watchPage(page, a);
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${a}/dashboard/`);
    await page.getByLabel('User token').fill(TOKENS.alice);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    await page.goto(`${a}/dashboard/#/p/front`);
    const row = page.locator('[data-connection="tracker"]');
    await row.locator('[data-status="active"]').waitFor();
    // Which client the gateway uses at the provider: the configured one.
    expect(await row.locator('[data-registration]').getAttribute('data-registration')).toBe('configured');
    expect(await row.textContent()).toContain('configured client');
    // And the project's upstream list says how calls to it get their credential.
    expect(
      await page.locator('section.upstreams li[data-upstream="tracker"] [data-credentials]').textContent(),
    ).toContain('connect with OAuth (configured client)');
    await row.getByRole('button', { name: 'Disconnect tracker' }).click();
    await page.locator('[data-connection="tracker"] [data-status="revoked"]').waitFor();
    await page.getByRole('button', { name: 'Connect tracker' }).waitFor();
    expect(seen.errors).toEqual([]);
    expect(seen.foreignRequests).toEqual([]);
  } finally {
    await browser.close();
  }
  // The provider itself no longer honours the grant (RFC 7009 revoked the refresh token and its grant).
  expect((await idp.introspect(refresh, CLIENT)).active).toBe(false);
  expect((await greet('alice')).body.error?.message).toContain(
    `yours was revoked; connect it at ${a}/v1/connect/front/tracker`,
  );
});

test("the admin's revocation revokes at the provider too; another user cannot disconnect alice", async () => {
  await connectAlice();
  const refresh = await latestRefreshToken();
  expect((await idp.introspect(refresh, CLIENT)).active).toBe(true);
  // Bob's "Disconnect" is about his own connection (he has none); alice's stays.
  const bobs = await fetch(`${a}/v1/projects/front/connections/tracker`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${TOKENS.bob}` },
  });
  expect(bobs.status).toBe(404);
  expect((await idp.introspect(refresh, CLIENT)).active).toBe(true);

  const res = await fetch(`${a}/v1/admin/projects/front/upstreams/tracker/authorization?user=alice`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  expect(res.status).toBe(200);
  expect((await idp.introspect(refresh, CLIENT)).active).toBe(false);
  expect((await greet('alice')).body.error?.message).toContain('yours was revoked');
});

test('a revocation the provider fails still disconnects here, and is logged without the tokens', async () => {
  await connectAlice();
  const refresh = await latestRefreshToken();
  await idp.failRevocation(true);
  try {
    const res = await fetch(`${a}/v1/projects/front/connections/tracker`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${TOKENS.alice}` },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ connection: { alias: 'tracker', status: 'revoked' } });
  } finally {
    await idp.failRevocation(false);
  }
  expect((await greet('alice')).body.error?.message).toContain('yours was revoked');
  // The provider never heard of it: the grant is still live there, which the log says.
  expect((await idp.introspect(refresh, CLIENT)).active).toBe(true);
  const failure = logs.find((l) => l.includes('revoking a connection at its authorization server failed'));
  expect(failure).toContain(idp.issuer);
  expect(failure).toContain('503');
  expect(failure).not.toContain(refresh);
});

test('a client that takes URL-mode elicitation is asked to connect instead of failing; connected, its retry goes through', async () => {
  const URL_CAPS = { elicitation: { form: {}, url: {} } };
  const call = (inputResponses?: Record<string, unknown>) =>
    front('bob').request(
      'tools/call',
      { name: 'tracker.greet', arguments: { name: 'bob' }, ...(inputResponses && { inputResponses }) },
      { capabilities: URL_CAPS },
    );
  const asked = await call();
  expect(asked.body.error).toBeUndefined();
  expect(asked.body.result).toEqual({
    resultType: 'input_required',
    inputRequests: {
      'taskrouter.connect': {
        method: 'elicitation/create',
        params: {
          mode: 'url',
          message: expect.stringContaining('Upstream "tracker" needs your authorization; none granted'),
          url: `${a}/v1/connect/front/tracker`,
        },
      },
    },
  });
  // A form-only client still gets the error with the URL in it (and in its data).
  const formOnly = await front('bob').callTool(
    'tracker.greet',
    { name: 'bob' },
    { capabilities: { elicitation: { form: {} } } },
  );
  expect(formOnly.body.error).toMatchObject({
    code: -31009,
    data: { upstream: 'tracker', connectUrl: `${a}/v1/connect/front/tracker` },
  });
  // Declined: the error. Accepted without connecting: asked again.
  expect((await call({ 'taskrouter.connect': { action: 'decline' } })).body.error).toMatchObject({
    code: -31009,
  });
  expect((await call({ 'taskrouter.connect': { action: 'accept' } })).body.result?.resultType).toBe(
    'input_required',
  );

  // Bob follows the URL (the connect page, as a browser would) and accepts: the retry is an ordinary call.
  const session = await signIn('bob');
  const res = await fetch(`${a}/v1/connect/front/tracker`, {
    headers: { cookie: session },
    redirect: 'manual',
  });
  const callback = await followAuthorization(
    String(res.headers.get('location')),
    'bob',
    `${a}/v1/connect/callback`,
  );
  const done = await fetch(callback, {
    headers: { cookie: `${session}; ${cookieOf(res, 'taskrouter_connect')}` },
    redirect: 'manual',
  });
  expect(done.status).toBe(302);
  const retried = await call({ 'taskrouter.connect': { action: 'accept' } });
  expect(retried.body.error).toBeUndefined();
  expect(retried.body.result?.resultType).toBe('complete');
  expect(JSON.stringify(retried.body.result)).toContain('bob');
});

test('a 2025-11-25 client (SDK 1.x) gets the URL-mode elicitation on its stream, with an elicitationId; once connected, its call completes', async () => {
  const client = new Sdk1Client(
    { name: 'sdk1-url', version: '1.0.0' },
    { capabilities: { elicitation: { url: {} } } },
  );
  const asked: Array<Record<string, unknown>> = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params as Record<string, unknown>);
    await connectAlice(); // the user follows the link
    return { action: 'accept' };
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${a}/v1/mcp/front`), {
      requestInit: { headers: { authorization: `Bearer ${TOKENS.alice}` } },
    }),
  );
  try {
    const result = await client.callTool({ name: 'tracker.greet', arguments: { name: 'alice' } });
    expect(JSON.stringify(result.content)).toContain('alice');
  } finally {
    await client.close();
  }
  expect(asked).toEqual([
    {
      mode: 'url',
      message: expect.stringContaining('Upstream "tracker" needs your authorization; yours was revoked'),
      url: `${a}/v1/connect/front/tracker`,
      elicitationId: expect.stringMatching(/^[\w-]{16}$/),
    },
  ]);
});

test('re-pointing the upstream ends its connections at the provider and here; the new address never gets their tokens', async () => {
  await connectAlice();
  expect((await greet('alice')).body.error).toBeUndefined();
  const refresh = await latestRefreshToken();
  expect((await idp.introspect(refresh, CLIENT)).active).toBe(true);
  const tokens = (await idp.issued()).flatMap((t) => [t.access, ...(t.refresh ? [t.refresh] : [])]);
  const elsewhere = await startHostileUpstream({ onRequest: (_req, res) => void res.writeHead(500).end() });
  const heard: Array<Record<string, unknown>> = [];
  elsewhere.server.on('request', (req) => heard.push({ ...req.headers }));
  const patch = (body: unknown) =>
    fetch(`${a}/v1/admin/projects/front/upstreams/tracker`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  try {
    const moved = await patch({ url: elsewhere.url });
    expect(moved.status).toBe(200);
    // The client secret was given for the old authorization server: it goes too.
    expect(((await moved.json()) as { auth: unknown }).auth).toEqual({
      mode: 'per_user',
      oauth: { clientId: CLIENT.id, clientSecretSet: false, registration: 'configured' },
    });
    // Revoked at the provider that issued it (RFC 7009), and here.
    expect((await idp.introspect(refresh, CLIENT)).active).toBe(false);
    expect((await greet('alice')).body.error?.message).toContain('yours was revoked');
    // The new address was probed, with none of the connection's tokens and no credential at all.
    expect(heard.length).toBeGreaterThan(0);
    expect(heard.every((h) => h['authorization'] === undefined)).toBe(true);
    expect(tokens.filter((t) => JSON.stringify(heard).includes(t))).toEqual([]);
    const audit = await fetch(`${a}/v1/admin/projects/front/audit`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    expect(await audit.text()).toMatch(/"upstream\.credentials_dropped".*"oauthConnections":[1-9]/);
  } finally {
    // Back where it was, its client secret given again: the tests after this connect through it.
    expect(
      (
        await patch({
          url: `${b}/v1/mcp/tracker`,
          auth: { mode: 'per_user', oauth: { clientId: CLIENT.id, clientSecret: CLIENT.secret } },
        })
      ).status,
    ).toBe(200);
    await elsewhere.close();
  }
});

test('no access or refresh token reaches the logs, Temporal (history, search attributes, memo) or the store in plaintext', async () => {
  const issued = (await idp.issued()).flatMap((t) => [t.access, ...(t.refresh ? [t.refresh] : [])]);
  expect(issued.length).toBeGreaterThan(10);
  const leaks = (where: string, text: string) => issued.filter((t) => text.includes(t)).map(() => where);

  expect(logs.length).toBeGreaterThan(0);
  const found = leaks('logs', logs.join('\n'));

  const client = await gw.temporalClient();
  expect(taskIds.length).toBe(2);
  for (const taskId of taskIds) {
    const handle = client.workflow.getHandle(taskWorkflowId(taskKeyOf(taskId)));
    const history = await handle.fetchHistory();
    const description = await handle.describe();
    const raw = JSON.stringify(
      { history, attributes: description.typedSearchAttributes, memo: description.memo },
      (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v),
    );
    expect(raw.length).toBeGreaterThan(1000);
    found.push(...leaks(`temporal ${taskId}`, raw));
  }

  const { store } = gw.config;
  if (store.postgresUrl) {
    const db = new pg.Client({ connectionString: store.postgresUrl });
    await db.connect();
    try {
      const tables = await db.query<{ tablename: string }>(
        'SELECT tablename FROM pg_tables WHERE schemaname = current_schema()',
      );
      expect(tables.rows.map((r) => r.tablename)).toContain('upstream_authorizations');
      for (const { tablename } of tables.rows) {
        const rows = await db.query(`SELECT * FROM "${tablename}"`);
        const text = JSON.stringify(rows.rows, (_k, v: unknown) =>
          Buffer.isBuffer(v) ? v.toString('latin1') : v,
        );
        found.push(...leaks(`table ${tablename}`, text));
        if (tablename === 'upstreams') expect(text).not.toContain(CLIENT.secret);
      }
    } finally {
      await db.end();
    }
  } else {
    const dir = path.dirname(store.sqliteFile);
    const files = readdirSync(dir).filter((f) => f.startsWith(path.basename(store.sqliteFile)));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const bytes = readFileSync(path.join(dir, f));
      found.push(...issued.filter((t) => bytes.includes(t)).map(() => `file ${f}`));
      expect(bytes.includes(CLIENT.secret)).toBe(false);
    }
  }
  expect(found).toEqual([]);
});
