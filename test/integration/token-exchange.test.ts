/**
 * RFC 8693 token exchange for `per_user` upstreams (issue 28 item 2, docs/oauth.md "Token exchange"),
 * against real parts: an OpenID provider (oidc-provider) whose access tokens the gateway accepts (its own
 * OAuth), a token-exchange authorization server over loopback HTTP (test/helpers/oauth-as.ts) that
 * authenticates the gateway's confidential client and issues a token per subject, and the example
 * upstream, which records the credential each call reaches it with.
 *
 * Covers: each OAuth caller gets their own exchanged token (never another user's); the exchange is made
 * once and kept sealed until 60 s before its expiry, then made again; a task's later upstream calls use
 * the kept token; a caller with an API token is refused with -31009 and a clear message; the settings
 * through the admin API (PATCH keeps the secret, a change drops kept tokens); the client secret, the
 * caller's token and the exchanged tokens reach no log, admin answer or database column in plaintext.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import type { TestAuthorizationServer } from '../helpers/oauth-as';
import { startTestAuthorizationServer } from '../helpers/oauth-as';
import type { OidcProvider } from '../helpers/oidc';
import { freePort, startOidcProvider } from '../helpers/oidc';

const ADMIN = 'admin-token-exchange-0000000000000000';
const ALICE_API_TOKEN = 'trp_alice-token-exchange-00000000000000';
const CLIENT = { clientId: 'taskrouter-exchange', clientSecret: 'exchange-secret-0123456789abcdef' };

let idp: OidcProvider;
let xas: TestAuthorizationServer;
let gw: TestGateway;
let base: string;
const logs: string[] = [];
/** The credential each upstream request arrived with (Authorization header). */
const seen: string[] = [];
const callerTokens: string[] = [];

beforeAll(async () => {
  idp = await startOidcProvider({
    users: { alice: { groups: ['devs'] }, bob: { groups: ['devs'] }, carol: { groups: ['devs'] } },
  });
  xas = await startTestAuthorizationServer({ exchange: CLIENT });
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  gw = await startTestGateway({
    upstream: {
      onRequest: (_req, headers) => {
        if (typeof headers.authorization === 'string') seen.push(headers.authorization);
      },
    },
    config: {
      http: { host: '127.0.0.1', port, publicBaseUrl: base },
      admin: { token: ADMIN },
      oauth: { issuers: [{ issuer: idp.issuer, groupTeams: { devs: 'core' } }] },
    },
    logSink: (line) => logs.push(line),
    projects: () => [],
    bootstrap: (url) => ({
      users: [
        {
          handle: 'alice',
          tokens: [{ name: 't', token: ALICE_API_TOKEN }],
          identities: [{ issuer: idp.issuer, subject: 'alice' }],
        },
      ],
      teams: [{ slug: 'core', members: ['alice'] }],
      projects: [
        {
          slug: 'front',
          team: 'core',
          namespacing: true,
          upstreams: [
            {
              alias: 'crm',
              url,
              auth: {
                mode: 'per_user',
                tokenExchange: {
                  issuer: xas.issuer,
                  ...CLIENT,
                  audience: 'crm-api',
                  scope: 'crm.read crm.write',
                },
              },
            },
          ],
        },
      ],
    }),
  });
}, 120_000);

afterAll(async () => {
  await gw?.close();
  await xas?.close();
  await idp?.close();
});

/** An access token the provider signs for `who`, for the project `front` (its audience). */
async function oauthToken(who: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const token = await idp.sign({
    iss: idp.issuer,
    sub: who,
    aud: `${base}/v1/mcp/front`,
    iat: now,
    exp: now + 600,
    scope: 'mcp:tools',
    preferred_username: who,
    groups: ['devs'],
  });
  callerTokens.push(token);
  return token;
}

const greet = (token: string, name = 'x') =>
  gw.clientFor('front').withToken(token).callTool('crm.greet', { name }, { tasks: false });

const exchangesOf = (subject: string) => xas.exchanges.filter((e) => e.subject === subject);

test('each OAuth caller gets their own exchanged token, made once and then kept', async () => {
  const alice = await oauthToken('alice');
  const bob = await oauthToken('bob');
  const first = await greet(alice, 'alice');
  expect(first.body.error).toBeUndefined();
  const second = await greet(bob, 'bob');
  expect(second.body.error).toBeUndefined();

  const [a] = exchangesOf('alice');
  const [b] = exchangesOf('bob');
  expect(a).toMatchObject({
    subjectTokenType: 'urn:ietf:params:oauth:token-type:access_token',
    resource: gw.upstream.url,
    audience: 'crm-api',
    scope: 'crm.read crm.write',
  });
  expect(b?.issued).not.toBe(a?.issued);
  // Each user's calls reached the upstream with their own exchanged token, never the other's, never
  // the caller's own access token.
  expect(seen).toContain(`Bearer ${a?.issued}`);
  expect(seen).toContain(`Bearer ${b?.issued}`);
  expect(seen.some((h) => h === `Bearer ${alice}` || h === `Bearer ${bob}`)).toBe(false);

  // Cached: more calls (a fresh access token of alice's too) exchange nothing more.
  const before = seen.length;
  expect((await greet(alice, 'again')).body.error).toBeUndefined();
  expect((await greet(await oauthToken('alice'), 'again')).body.error).toBeUndefined();
  expect(exchangesOf('alice')).toHaveLength(1);
  expect(exchangesOf('bob')).toHaveLength(1);
  expect(seen.slice(before).every((h) => h === `Bearer ${a?.issued}`)).toBe(true);
});

test('an exchanged token is exchanged again once it is within 60 s of its expiry', async () => {
  // 61 s: good for one more second, then inside the margin.
  xas.expiresIn = 61;
  try {
    const carol = await oauthToken('carol');
    expect((await greet(carol)).body.error).toBeUndefined();
    expect(exchangesOf('carol')).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await greet(carol)).body.error).toBeUndefined();
    const both = exchangesOf('carol');
    expect(both).toHaveLength(2);
    expect(seen.at(-1)).toBe(`Bearer ${both[1]?.issued}`);
  } finally {
    xas.expiresIn = 3600;
  }
});

test("a task's later upstream calls use the kept exchanged token", async () => {
  const alice = await oauthToken('alice');
  const client = gw.clientFor('front').withToken(alice);
  const created = await client.callTool('crm.slow_compute', { seconds: 1, label: 'kept' });
  expect(created.body.result?.resultType).toBe('task');
  const polls = seen.length;
  const done = await client.waitForTask(String(created.body.result?.taskId), undefined, 45_000);
  expect(done).toMatchObject({ status: 'completed' });
  expect(JSON.stringify(done.result)).toContain('kept');
  // The worker polled the upstream with it too.
  expect(seen.length).toBeGreaterThan(polls);
  const [a] = exchangesOf('alice');
  expect(exchangesOf('alice')).toHaveLength(1);
  expect(seen.at(-1)).toBe(`Bearer ${a?.issued}`);
});

test('a caller who signed in with an API token is refused clearly, and nothing is exchanged', async () => {
  const count = xas.exchanges.length;
  const reply = await greet(ALICE_API_TOKEN);
  expect(reply.body.error?.code).toBe(-31009);
  expect(reply.body.error?.message).toContain('exchanging their OAuth access token');
  expect(reply.body.error?.message).toContain('an API token cannot be exchanged');
  expect(reply.body.error?.data).toMatchObject({ upstream: 'crm', tokenExchange: 'oauth_sign_in_required' });
  expect(xas.exchanges.length).toBe(count);
});

test('the admin API shows the settings without the secret; a PATCH keeps it, and a change drops kept tokens', async () => {
  const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
  const listed = await fetch(`${base}/v1/admin/projects/front/upstreams`, { headers: admin });
  const text = await listed.text();
  expect(text).not.toContain(CLIENT.clientSecret);
  const crm = (JSON.parse(text) as { upstreams: Array<{ alias: string; auth: unknown }> }).upstreams.find(
    (u) => u.alias === 'crm',
  );
  expect(crm?.auth).toEqual({
    mode: 'per_user',
    tokenExchange: {
      issuer: xas.issuer,
      clientId: CLIENT.clientId,
      clientSecretSet: true,
      audience: 'crm-api',
      scope: 'crm.read crm.write',
    },
  });

  // Another scope, the secret not given again: kept, and alice's kept token is dropped.
  const patched = await fetch(`${base}/v1/admin/projects/front/upstreams/crm`, {
    method: 'PATCH',
    headers: admin,
    body: JSON.stringify({
      auth: {
        mode: 'per_user',
        tokenExchange: {
          issuer: xas.issuer,
          clientId: CLIENT.clientId,
          audience: 'crm-api',
          scope: 'crm.read',
        },
      },
    }),
  });
  const patchedText = await patched.text();
  expect(patched.status).toBe(200);
  expect(patchedText).not.toContain(CLIENT.clientSecret);
  expect((JSON.parse(patchedText) as { auth: { tokenExchange: unknown } }).auth.tokenExchange).toMatchObject({
    clientSecretSet: true,
    scope: 'crm.read',
  });
  const before = exchangesOf('alice').length;
  expect((await greet(await oauthToken('alice'))).body.error).toBeUndefined();
  expect(exchangesOf('alice')).toHaveLength(before + 1);
  expect(exchangesOf('alice').at(-1)?.scope).toBe('crm.read');
  // The secret still authenticates the client: no refusal at the exchange server.
  expect(xas.refusals).toEqual([]);

  // Token exchange and connecting with OAuth do not go together.
  const both = await fetch(`${base}/v1/admin/projects/front/upstreams/crm`, {
    method: 'PATCH',
    headers: admin,
    body: JSON.stringify({
      auth: { mode: 'per_user', oauth: {}, tokenExchange: { issuer: xas.issuer, clientId: 'x' } },
    }),
  });
  expect(both.status).toBe(400);
});

test('the client secret, callers’ tokens and exchanged tokens reach no log and no database column in plaintext', async () => {
  const secrets = [CLIENT.clientSecret, ...callerTokens, ...xas.exchanges.map((e) => e.issued)];
  expect(secrets.length).toBeGreaterThan(4);
  const logText = logs.join('\n');
  expect(logs.length).toBeGreaterThan(0);
  for (const s of secrets) expect(logText).not.toContain(s);
  for (const s of secrets) {
    for (const dump of await databaseDump()) expect(dump).not.toContain(s);
  }
});

/** Every row of every table, as text (SQLite file bytes, or PostgreSQL rows as JSON). */
async function databaseDump(): Promise<string[]> {
  const store = gw.config.store;
  if (store.postgresUrl !== undefined) {
    const client = new pg.Client({ connectionString: store.postgresUrl });
    await client.connect();
    try {
      const tables = await client.query<{ tablename: string }>(
        "select tablename from pg_tables where schemaname = 'public'",
      );
      const out: string[] = [];
      for (const t of tables.rows) {
        const rows = await client.query(`select * from "${t.tablename}"`);
        out.push(JSON.stringify(rows.rows));
      }
      return out;
    } finally {
      await client.end();
    }
  }
  const dir = path.dirname(store.sqliteFile);
  return readdirSync(dir)
    .filter((f) => f.startsWith(path.basename(store.sqliteFile)))
    .map((f) => readFileSync(path.join(dir, f)).toString('latin1'));
}
