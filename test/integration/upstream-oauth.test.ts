/**
 * Connecting a `per_user` upstream with OAuth (docs/oauth.md, "Connecting upstreams"). The upstream is
 * itself an OAuth-protected MCP server: a second TaskRouter gateway whose project trusts a real OpenID
 * provider (oidc-provider in a child process). Gateway A discovers the upstream's protected-resource and
 * authorization-server metadata, registers itself dynamically, and runs authorization code + PKCE with
 * the resource indicator for the signed-in dashboard user; the user's calls then carry their own token.
 */
import { launchChromium, watchPage } from '../helpers/browser';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway, tokenUsers } from '../helpers/gateway';
import type { OidcProvider } from '../helpers/oidc';
import {
  followAuthorization,
  freePort,
  startOidcProvider,
  cookieOf,
  dashboardSession,
} from '../helpers/oidc';
import { startOAuthUpstream } from './upstream-oauth-connect-fixture';

const TOKENS = {
  alice: 'trp_alice-upstream-oauth-000000000000000',
  bob: 'trp_bob-upstream-oauth-00000000000000000',
};

let idp: OidcProvider;
let upstreamGw: TestGateway;
let gw: TestGateway;
let a: string;
let b: string;

beforeAll(async () => {
  const [pa, pb] = [await freePort(), await freePort()];
  a = `http://127.0.0.1:${pa}`;
  b = `http://127.0.0.1:${pb}`;
  // Access tokens for the upstream live 30 s, less than the gateway's renewal margin (60 s): every use
  // of the connection renews it, with a rotated refresh token each time.
  idp = await startOidcProvider({
    users: { alice: { groups: ['devs'] }, bob: { groups: ['devs'] } },
    resources: { [`${b}/v1/mcp/tracker`]: { ttl: 30 } },
  });
  // The upstream: its project `tracker` takes OAuth access tokens from the provider.
  upstreamGw = await startOAuthUpstream(idp, pb);
  gw = await startTestGateway({
    config: { http: { host: '127.0.0.1', port: pa, publicBaseUrl: a }, connectUpstreams: true },
    bootstrap: () => ({
      users: tokenUsers({ alice: TOKENS.alice, bob: TOKENS.bob }),
      teams: [{ slug: 'core', members: ['alice', 'bob'] }],
      projects: [
        {
          slug: 'front',
          team: 'core',
          namespacing: false,
          upstreams: [{ alias: 'tracker', url: `${b}/v1/mcp/tracker`, auth: { mode: 'per_user' } }],
        },
      ],
    }),
  });
}, 120_000);
afterAll(async () => {
  await gw?.close();
  await upstreamGw?.close();
  await idp?.close();
});

/** A dashboard session cookie for `who`. */
const signIn = (who: keyof typeof TOKENS): Promise<string> => dashboardSession(a, TOKENS[who]);

/** Starts a connection as the session's user; returns the issuer's redirect back and the flow cookie. */
async function startConnect(session: string, login: string): Promise<{ callback: URL; flow: string }> {
  const res = await fetch(`${a}/v1/connect/front/tracker`, {
    headers: { cookie: session },
    redirect: 'manual',
  });
  expect(res.status).toBe(302);
  const location = String(res.headers.get('location'));
  expect(location.startsWith(idp.issuer)).toBe(true);
  const asked = new URL(location);
  expect(asked.searchParams.get('resource')).toBe(`${b}/v1/mcp/tracker`);
  expect(asked.searchParams.get('code_challenge_method')).toBe('S256');
  const callback = await followAuthorization(location, login, `${a}/v1/connect/callback`);
  return { callback, flow: cookieOf(res, 'taskrouter_connect') };
}

function front(who: keyof typeof TOKENS) {
  return gw.clientFor('front').withToken(TOKENS[who]);
}

async function greet(who: keyof typeof TOKENS) {
  return front(who).callTool('greet', { name: who }, { tasks: false });
}

test('a user connects the upstream through its authorization server and calls its tools with their own token', async () => {
  const before = await greet('alice');
  expect(before.body.error?.message).toContain(
    `needs your authorization; none granted; connect it at ${a}/v1/connect/front/tracker`,
  );

  const session = await signIn('alice');
  const { callback, flow } = await startConnect(session, 'alice');
  const done = await fetch(callback, { headers: { cookie: `${session}; ${flow}` }, redirect: 'manual' });
  expect(done.status).toBe(302);
  expect(done.headers.get('location')).toBe('/dashboard/#/p/front');

  const reply = await greet('alice');
  expect(reply.body.error).toBeUndefined();
  expect(JSON.stringify(reply.body.result)).toContain('alice');
});

test("what a user's own credential lists and reads is marked private, whatever the upstream says", async () => {
  // The example upstream answers `public` (here through the demo project, with no credential); behind
  // a per_user upstream the same answers are one user's.
  for (const method of ['server/discover', 'resources/list']) {
    const shared = await gw.client.request(method, {}, { tasks: false });
    expect(shared.body.result?.cacheScope).toBe('public');
  }
  for (const [method, params] of [
    ['server/discover', {}],
    ['tools/list', {}],
    ['resources/list', {}],
    ['resources/read', { uri: 'test://static-text' }],
  ] as const) {
    const reply = await front('alice').request(method, params, { tasks: false });
    expect(reply.body.result?.cacheScope).toBe('private');
  }
});

async function aliceAuthorization(): Promise<{ id: string; expiresAt: string; status: string }> {
  const res = await fetch(`${a}/v1/admin/projects/front/authorizations`, {
    headers: { authorization: `Bearer ${TOKENS.alice}` },
  });
  const body = (await res.json()) as {
    authorizations: Array<{ id: string; expiresAt: string; status: string }>;
  };
  return body.authorizations[0] as { id: string; expiresAt: string; status: string };
}

test('the connection renews itself before its access token expires, in place, honouring rotation', async () => {
  const seen = [await aliceAuthorization()];
  for (let i = 0; i < 3; i++) {
    const reply = await greet('alice');
    expect(reply.body.error).toBeUndefined();
    seen.push(await aliceAuthorization());
  }
  // Same authorization (tasks bound to it keep working), a new expiry each time. oidc-provider rotates
  // refresh tokens and refuses a used one: each renewal succeeding shows the rotated one was kept.
  expect(new Set(seen.map((x) => x.id)).size).toBe(1);
  expect(new Set(seen.map((x) => x.expiresAt)).size).toBe(seen.length);
  expect(seen.every((x) => x.status === 'active')).toBe(true);
});

test("another user's calls never use that connection: they are told to connect their own", async () => {
  const reply = await greet('bob');
  expect(reply.body.error?.message).toContain('needs your authorization; none granted; connect it at');
});

test('a callback completed under another signed-in user, or without the flow cookie, is refused', async () => {
  const alice = await signIn('alice');
  const bob = await signIn('bob');
  const { callback, flow } = await startConnect(alice, 'alice');
  const swapped = await fetch(callback, { headers: { cookie: `${bob}; ${flow}` }, redirect: 'manual' });
  expect(swapped.status).toBe(403);
  expect(((await swapped.json()) as { error: { message: string } }).error.message).toMatch(/someone else/);
  const forged = await fetch(`${a}/v1/connect/callback?code=x&state=y`, { headers: { cookie: bob } });
  expect(forged.status).toBe(403);
  // Bob still has no connection.
  expect((await greet('bob')).body.error?.message).toContain('none granted');
});

test('connecting needs a dashboard session and a project the user may call', async () => {
  expect((await fetch(`${a}/v1/connect/front/tracker`, { redirect: 'manual' })).status).toBe(401);
  const session = await signIn('bob');
  const res = await fetch(`${a}/v1/connect/nowhere/tracker`, {
    headers: { cookie: session },
    redirect: 'manual',
  });
  expect(res.status).toBe(404);
});

test('the user revokes the connection; calls then say so and where to connect again', async () => {
  const res = await fetch(`${a}/v1/admin/projects/front/upstreams/tracker/authorization`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${TOKENS.alice}` },
  });
  expect(res.status).toBeLessThan(300);
  const reply = await greet('alice');
  expect(reply.body.error?.message).toContain(
    `needs your authorization; yours was revoked; connect it at ${a}/v1/connect/front/tracker`,
  );
});

test('the dashboard offers "Connect" for the upstream; in a real browser it goes to the issuer and back connected', async () => {
  const browser = await launchChromium();
  try {
    const page = await (await browser.newContext()).newPage();
    const seen = watchPage(page, a);
    await page.goto(`${a}/dashboard/`);
    await page.getByLabel('User token').fill(TOKENS.bob);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    await page.goto(`${a}/dashboard/#/p/front`);
    const row = page.locator('[data-connection="tracker"]');
    await row.locator('[data-status="none"]').waitFor();
    await row.getByRole('button', { name: 'Connect tracker' }).click();
    // The provider's login page; then straight back to the project.
    await page.getByLabel('Username').fill('bob');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.locator('[data-connection="tracker"] [data-status="active"]').waitFor();
    expect(page.url()).toBe(`${a}/dashboard/#/p/front`);
    expect(seen.errors).toEqual([]);
    expect(seen.foreignRequests.every((u) => u.startsWith(idp.issuer))).toBe(true);
  } finally {
    await browser.close();
  }
  const reply = await greet('bob');
  expect(reply.body.error).toBeUndefined();
  expect(JSON.stringify(reply.body.result)).toContain('bob');
});
