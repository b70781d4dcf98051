/**
 * The gateway as an OAuth 2.1 protected resource (docs/oauth.md): a real OpenID provider (oidc-provider in
 * a child process, test/fixtures/oidc-provider.mjs) issues real signed access tokens; the gateway checks
 * them with the provider's JWKS, provisions users, maps groups to teams, and then applies the ordinary
 * access rules. The SDK 2.x client's own OAuth support runs the whole flow from the gateway's 401.
 */
import { randomUUID } from 'node:crypto';
import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/client';
import {
  Client as Client2,
  StreamableHTTPClientTransport as Transport2,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import type { McpTestClient, RpcReply } from '../helpers/mcp-client';
import type { OidcProvider } from '../helpers/oidc';
import { freePort, startOidcProvider } from '../helpers/oidc';

const ADMIN = `admin-${randomUUID()}`;
const DEAD_ISSUER = 'http://127.0.0.1:9';
const BOB = 'trp_bob-api-token-oauth-000000000000000';

let idp: OidcProvider;
let otherIdp: OidcProvider;
let gw: TestGateway;
let secure: McpTestClient;
let base: string;

beforeAll(async () => {
  idp = await startOidcProvider({
    users: {
      alice: { name: 'Alice', groups: ['devs'] },
      erin: { name: 'Erin', groups: [] },
    },
  });
  otherIdp = await startOidcProvider({ users: { alice: { groups: ['devs'] } } });
  // The resource names (token audiences) come from the configured public origin, so the port is chosen first.
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  gw = await startTestGateway({
    config: {
      http: { host: '127.0.0.1', port, publicBaseUrl: base },
      admin: { token: ADMIN },
      oauth: {
        issuers: [
          {
            issuer: idp.issuer,
            requiredScopes: ['mcp:tools'],
            groupTeams: { devs: 'core' },
            // The rotation test wants a token with a new key id to fetch the keys again at once.
            jwksCooldownMs: 0,
          },
          // Trusted, but nothing answers there: its tokens cannot be checked.
          { issuer: DEAD_ISSUER },
        ],
      },
    },
    projects: () => [],
    bootstrap: (url) => {
      return {
        users: [
          {
            handle: 'bob',
            tokens: [{ name: 't', token: BOB }],
            // Linked ahead of time: this subject signs in as bob, whatever its username claim says.
            identities: [{ issuer: idp.issuer, subject: 'bob-at-idp' }],
          },
        ],
        teams: [
          { slug: 'core', members: [] },
          { slug: 'other', members: [] },
        ],
        projects: [
          {
            slug: 'secure',
            team: 'core',
            namespacing: false,
            members: ['bob'],
            upstreams: [{ alias: 'example', url }],
          },
          { slug: 'elsewhere', team: 'other', namespacing: false, upstreams: [{ alias: 'example', url }] },
        ],
      };
    },
  });
  secure = gw.clientFor('secure');
});
afterAll(async () => {
  await gw?.close();
  await idp?.close();
  await otherIdp?.close();
});

const resource = (slug: string) => `${base}/v1/mcp/${slug}`;

/** Claims of a good access token for `secure`, as the provider would issue it. */
function claims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return {
    iss: idp.issuer,
    sub: 'alice',
    aud: resource('secure'),
    iat: now,
    exp: now + 300,
    scope: 'mcp:tools',
    preferred_username: 'alice',
    name: 'Alice',
    groups: ['devs'],
    ...overrides,
  };
}

function listWith(token: string): Promise<RpcReply> {
  return secure.withToken(token).request('tools/list', {}, { tasks: false });
}

function challengeOf(reply: RpcReply): Record<string, string> {
  const header = reply.headers.get('www-authenticate') ?? '';
  expect(header).toMatch(/^Bearer /);
  return Object.fromEntries([...header.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
}

describe('protected resource metadata and the challenge', () => {
  test('each project has its RFC 9728 document naming its resource, the issuer and the scopes', async () => {
    const res = await fetch(`${base}/.well-known/oauth-protected-resource/v1/mcp/secure`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      resource: resource('secure'),
      authorization_servers: [idp.issuer, DEAD_ISSUER],
      scopes_supported: ['mcp:tools'],
      bearer_methods_supported: ['header'],
    });
  });

  test('without oauth.dashboard, the dashboard offers no sign-in through the issuer', async () => {
    expect((await fetch(`${base}/v1/session/sso`)).status).toBe(404);
    expect((await fetch(`${base}/v1/session/sso/start`, { redirect: 'manual' })).status).toBe(404);
  });

  test('a request without a token gets 401 with resource_metadata and scope, and no error code', async () => {
    const reply = await secure.request('tools/list', {}, { tasks: false });
    expect(reply.status).toBe(401);
    const c = challengeOf(reply);
    expect(c['resource_metadata']).toBe(`${base}/.well-known/oauth-protected-resource/v1/mcp/secure`);
    expect(c['scope']).toBe('mcp:tools');
    expect(c['error']).toBeUndefined();
  });

  // mcp-remote 0.15.1 probes the endpoint twice with exactly this GET (no token) before it connects: the
  // first reads the challenge's resource_metadata and scope, the second decides whether to start its
  // OAuth callback listener before opening the browser (only on a 401). Any other method is no different.
  test.each(['GET', 'DELETE', 'PUT', 'PATCH', 'OPTIONS'])(
    'a %s without a token gets the 401 challenge, not 405; with a good token it is 405',
    async (method) => {
      const bare = await fetch(resource('secure'), {
        method,
        headers: { Accept: 'application/json, text/event-stream' },
      });
      expect(bare.status).toBe(401);
      const header = bare.headers.get('www-authenticate') ?? '';
      expect(header).toContain(
        `resource_metadata="${base}/.well-known/oauth-protected-resource/v1/mcp/secure"`,
      );
      expect(header).toContain('scope="mcp:tools"');
      // A project that does not exist looks the same to a caller without a token.
      expect((await fetch(resource('no-such-project'), { method })).status).toBe(401);

      const signedIn = await fetch(resource('secure'), {
        method,
        headers: { Authorization: `Bearer ${await idp.sign(claims())}` },
      });
      expect(signedIn.status).toBe(405);
      expect(signedIn.headers.get('allow')).toBe('POST');
      expect(signedIn.headers.get('www-authenticate')).toBeNull();
    },
  );
});

describe('access tokens', () => {
  test('a good token is accepted; its user is provisioned and joins the team its group maps to', async () => {
    const reply = await listWith(await idp.sign(claims()));
    expect(reply.status).toBe(200);
    expect(JSON.stringify(reply.body.result)).toContain('greet');
    const users = await fetch(`${base}/v1/admin/users`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(JSON.stringify(await users.json())).toContain('"handle":"alice"');
  });

  test('a valid token whose user may not call the project gets the same 404 as a missing project', async () => {
    const erin = await idp.sign(claims({ sub: 'erin', preferred_username: 'erin', groups: [] }));
    expect((await listWith(erin)).status).toBe(404);
    // Alice's token is for `secure`; for `elsewhere` (no team of hers) she needs a token for that resource.
    const forElsewhere = await idp.sign(claims({ aud: resource('elsewhere') }));
    const reply = await gw
      .clientFor('elsewhere')
      .withToken(forElsewhere)
      .request('tools/list', {}, { tasks: false });
    expect(reply.status).toBe(404);
  });

  test('the mapped team follows the token groups: without the group, the membership goes', async () => {
    expect((await listWith(await idp.sign(claims({ groups: ['other-group'] })))).status).toBe(404);
    expect((await listWith(await idp.sign(claims({ groups: ['devs', 'other-group'] })))).status).toBe(200);
  });

  test('a subject linked to an existing user acts as that user (a direct member here)', async () => {
    const token = await idp.sign(claims({ sub: 'bob-at-idp', preferred_username: 'robert', groups: [] }));
    expect((await listWith(token)).status).toBe(200);
    const users = await fetch(`${base}/v1/admin/users`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(JSON.stringify(await users.json())).not.toContain('"handle":"robert"');
  });

  test('API tokens keep working beside OAuth tokens', async () => {
    expect((await listWith(BOB)).status).toBe(200);
    expect((await listWith('trp_not-a-real-token-000000000000000')).status).toBe(401);
  });

  const encode = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

  test.each<[string, () => Promise<string>, number, string]>([
    [
      'for another resource (audience)',
      () => idp.sign(claims({ aud: resource('elsewhere') })),
      401,
      'invalid_token',
    ],
    [
      'for no resource of this gateway',
      () => idp.sign(claims({ aud: 'https://api.example.com' })),
      401,
      'invalid_token',
    ],
    [
      'expired beyond the clock skew',
      () =>
        idp.sign(
          claims({ exp: Math.floor(Date.now() / 1000) - 120, iat: Math.floor(Date.now() / 1000) - 600 }),
        ),
      401,
      'invalid_token',
    ],
    ['without an expiry', () => idp.sign(claims({ exp: undefined })), 401, 'invalid_token'],
    [
      'tampered (payload changed after signing)',
      async () => {
        const [h, , s] = (await idp.sign(claims({ groups: [] }))).split('.');
        return `${h}.${encode(claims({ sub: 'bob', preferred_username: 'bob' }))}.${s}`;
      },
      401,
      'invalid_token',
    ],
    ['from another issuer', () => otherIdp.sign(claims({ iss: otherIdp.issuer })), 401, 'invalid_token'],
    ['claiming this issuer but signed by another', () => otherIdp.sign(claims()), 401, 'invalid_token'],
    [
      'alg none',
      async () => `${encode({ alg: 'none', typ: 'JWT' })}.${encode(claims())}.`,
      401,
      'invalid_token',
    ],
    ['HS256 (a shared-secret algorithm)', () => hs256(claims()), 401, 'invalid_token'],
    ['garbage shaped like a JWT', async () => 'aaa.bbb.ccc', 401, 'invalid_token'],
    [
      'without the required scope',
      () => idp.sign(claims({ scope: 'openid profile' })),
      403,
      'insufficient_scope',
    ],
  ])('a token %s is refused with the spec error', async (_what, token, status, error) => {
    const reply = await listWith(await token());
    expect(reply.status).toBe(status);
    expect(reply.body.error?.message).toBeTruthy();
    const c = challengeOf(reply);
    expect(c['error']).toBe(error);
    expect(c['resource_metadata']).toBe(`${base}/.well-known/oauth-protected-resource/v1/mcp/secure`);
    if (error === 'insufficient_scope') expect(c['scope']).toBe('mcp:tools');
  });

  test('a trusted issuer whose keys cannot be fetched: 503 naming the issuer, not a 500 nor a 401', async () => {
    const reply = await listWith(await otherIdp.sign(claims({ iss: DEAD_ISSUER })));
    expect(reply.status).toBe(503);
    expect(reply.body.error?.message).toContain(DEAD_ISSUER);
  });

  test('a new signing key at the issuer is picked up, and a dropped key is no longer accepted', async () => {
    const before = await idp.sign(claims({ jti: 'before-rotation' }));
    const unused = await idp.sign(claims({ jti: 'never-presented' }));
    expect((await listWith(before)).status).toBe(200);
    await idp.rotate(true);
    const after = await idp.sign(claims({ jti: 'after-rotation' }));
    expect((await listWith(after)).status).toBe(200);
    const old = await listWith(unused);
    expect(old.status).toBe(401);
    expect(challengeOf(old)['error']).toBe('invalid_token');
  });
});

/** An HS256 token: a shared-secret algorithm is never accepted, whatever the secret. */
async function hs256(payload: Record<string, unknown>): Promise<string> {
  const { SignJWT } = await import('jose');
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'HS256' })
    .sign(new TextEncoder().encode('x'.repeat(32)));
}

describe('the SDK 2.x client with its own OAuth support', () => {
  /** An OAuth client provider as an MCP client app would write it; the "browser" walks the provider. */
  class TestProvider implements OAuthClientProvider {
    client: Record<string, unknown> | undefined;
    saved: Record<string, unknown> | undefined;
    verifier = '';
    callback: URL | undefined;
    discovery: OAuthDiscoveryState | undefined;
    readonly redirectUrl = 'http://127.0.0.1:9/callback';
    get clientMetadata() {
      return {
        client_name: 'sdk2 oauth test',
        redirect_uris: [this.redirectUrl],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      };
    }
    clientInformation() {
      return this.client as never;
    }
    saveClientInformation(info: Record<string, unknown>) {
      this.client = info;
    }
    tokens() {
      return this.saved as never;
    }
    saveTokens(tokens: Record<string, unknown>) {
      this.saved = tokens;
    }
    async redirectToAuthorization(url: URL) {
      this.callback = await idp.authorize(url.toString(), 'alice', this.redirectUrl);
    }
    saveCodeVerifier(v: string) {
      this.verifier = v;
    }
    codeVerifier() {
      return this.verifier;
    }
    saveDiscoveryState(state: OAuthDiscoveryState) {
      this.discovery = state;
    }
    discoveryState() {
      return this.discovery;
    }
  }

  test('discovers the metadata from the 401, registers, signs in, and calls a tool', async () => {
    const provider = new TestProvider();
    const first = new Transport2(new URL(secure.url), { authProvider: provider });
    const client = new Client2({ name: 'sdk2-oauth', version: '2.0.0' });
    await expect(client.connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.callback?.searchParams.get('code')).toBeTruthy();
    await first.finishAuth((provider.callback as URL).searchParams);
    expect(provider.saved?.['access_token']).toBeTruthy();

    const connected = new Client2({ name: 'sdk2-oauth', version: '2.0.0' });
    await connected.connect(new Transport2(new URL(secure.url), { authProvider: provider }));
    const greeting = await connected.callTool({ name: 'greet', arguments: { name: 'Oauth' } });
    expect(JSON.stringify(greeting.content)).toContain('Oauth');
    await connected.close();
  });
});
