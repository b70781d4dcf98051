/**
 * Client ID Metadata Documents (issue 28 item 1, docs/oauth.md "Connecting upstreams"), against real
 * parts over loopback HTTP: two authorization servers (test/helpers/oauth-as.ts), one that accepts
 * client metadata documents and fetches the gateway's from its `client_id` URL, one that offers only
 * dynamic registration; each guards an MCP resource that relays to the example upstream. The gateway
 * publishes its document (on loopback http only because `connect.allowLoopbackHttp` says so; the rule
 * itself is test/config/connect.test.ts's), connects through the document where it is accepted and
 * registers where it is not, and says which it used in the admin API, the connections view and the
 * project's upstream list.
 */
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import type { TestAuthorizationServer } from '../helpers/oauth-as';
import { startTestAuthorizationServer } from '../helpers/oauth-as';
import { cookieOf, dashboardSession, freePort } from '../helpers/oidc';

const ALICE = 'trp_alice-cimd-0000000000000000000000';
const ADMIN = 'admin-token-cimd-00000000000000000000';

let cimdAs: TestAuthorizationServer;
let dcrAs: TestAuthorizationServer;
let gw: TestGateway;
let base: string;

beforeAll(async () => {
  // Both servers accept documents or registrations as configured; neither knows any client beforehand.
  cimdAs = await startTestAuthorizationServer({ cimd: true, registration: true });
  dcrAs = await startTestAuthorizationServer({ registration: true });
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  gw = await startTestGateway({
    config: {
      http: { host: '127.0.0.1', port, publicBaseUrl: base },
      admin: { token: ADMIN },
      connect: { allowLoopbackHttp: true, clientName: 'TaskRouter test gateway' },
    },
    bootstrap: (url) => {
      cimdAs.relayTo = url;
      dcrAs.relayTo = url;
      return {
        users: [{ handle: 'alice', tokens: [{ name: 't', token: ALICE }] }],
        teams: [{ slug: 'core', members: ['alice'] }],
        projects: [
          {
            slug: 'front',
            team: 'core',
            upstreams: [
              { alias: 'docs', url: cimdAs.resource, auth: { mode: 'per_user', oauth: {} } },
              { alias: 'legacy', url: dcrAs.resource, auth: { mode: 'per_user', oauth: {} } },
            ],
          },
        ],
      };
    },
  });
}, 120_000);

afterAll(async () => {
  await gw?.close();
  await cimdAs?.close();
  await dcrAs?.close();
});

const DOCUMENT = () => `${base}/v1/connect/client-metadata.json`;

/** Connects `alias` for alice as a browser would; returns the client id the gateway presented. */
async function connect(alias: string): Promise<string> {
  const session = await dashboardSession(base, ALICE);
  const start = await fetch(`${base}/v1/connect/front/${alias}`, {
    headers: { cookie: session },
    redirect: 'manual',
  });
  expect(start.status).toBe(302);
  const asked = new URL(String(start.headers.get('location')));
  const back = await fetch(asked, { redirect: 'manual' });
  expect(back.status).toBe(302);
  const callback = String(back.headers.get('location'));
  expect(callback.startsWith(`${base}/v1/connect/callback?`)).toBe(true);
  const done = await fetch(callback, {
    headers: { cookie: `${session}; ${cookieOf(start, 'taskrouter_connect')}` },
    redirect: 'manual',
  });
  expect(done.status).toBe(302);
  return asked.searchParams.get('client_id') as string;
}

async function upstreamAuth(alias: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}/v1/admin/projects/front/upstreams`, {
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  const body = (await res.json()) as { upstreams: Array<{ alias: string; auth: Record<string, unknown> }> };
  return body.upstreams.find((u) => u.alias === alias)?.auth as Record<string, unknown>;
}

test('the gateway publishes its client metadata document at a stable URL under the public origin', async () => {
  const res = await fetch(DOCUMENT());
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('application/json');
  expect(await res.json()).toEqual({
    client_id: DOCUMENT(),
    client_name: 'TaskRouter test gateway',
    redirect_uris: [`${base}/v1/connect/callback`],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  });
});

test('a server that accepts client metadata documents gets the document URL as client_id, fetches it, and the connect completes without registration', async () => {
  // Before any connect, nothing says how the client will come about.
  expect(await upstreamAuth('docs')).toEqual({ mode: 'per_user', oauth: { clientSecretSet: false } });
  const clientId = await connect('docs');
  expect(clientId).toBe(DOCUMENT());
  expect(cimdAs.documentFetches).toEqual([DOCUMENT()]);
  expect(cimdAs.registrations).toEqual([]);
  expect(cimdAs.refusals).toEqual([]);

  // The connection works: the upstream's server sees the token it issued to the document's client.
  const call = await gw
    .clientFor('front')
    .withToken(ALICE)
    .callTool('docs.greet', { name: 'alice' }, { tasks: false });
  expect(call.body.error).toBeUndefined();
  expect(cimdAs.resourceTokens.length).toBeGreaterThan(0);

  // Which method the upstream uses: the admin API, the connections view, the project's upstream list.
  expect(await upstreamAuth('docs')).toEqual({
    mode: 'per_user',
    oauth: { clientSecretSet: false, registration: 'metadata_document' },
  });
  const headers = { authorization: `Bearer ${ALICE}` };
  const connections = (await (await fetch(`${base}/v1/projects/front/connections`, { headers })).json()) as {
    connections: Array<{ alias: string; status: string; registration: string | null }>;
  };
  expect(connections.connections.find((c) => c.alias === 'docs')).toMatchObject({
    status: 'active',
    registration: 'metadata_document',
  });
  const project = (await (await fetch(`${base}/v1/projects/front`, { headers })).json()) as {
    upstreams: Array<{ alias: string; credentials: string }>;
  };
  expect(project.upstreams.find((u) => u.alias === 'docs')?.credentials).toBe('oauth_metadata_document');

  // A second connect reuses the same client id; the server may fetch the document again, nothing registers.
  expect(await connect('docs')).toBe(DOCUMENT());
  expect(cimdAs.registrations).toEqual([]);
});

test('a server without client metadata documents falls back to dynamic registration, made once', async () => {
  const clientId = await connect('legacy');
  expect(dcrAs.registrations).toEqual([clientId]);
  expect(dcrAs.documentFetches).toEqual([]);
  const call = await gw
    .clientFor('front')
    .withToken(ALICE)
    .callTool('legacy.greet', { name: 'alice' }, { tasks: false });
  expect(call.body.error).toBeUndefined();
  expect(await upstreamAuth('legacy')).toEqual({
    mode: 'per_user',
    oauth: { clientSecretSet: false, registration: 'dynamic' },
  });
  expect(await connect('legacy')).toBe(clientId);
  expect(dcrAs.registrations).toHaveLength(1);
});
