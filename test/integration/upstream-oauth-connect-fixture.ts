/**
 * The world of upstream-oauth-connect.test.ts (its upstream gateway serves upstream-oauth.test.ts too): an
 * OpenID provider offering no dynamic registration, only a client registered beforehand; the upstream, a
 * second TaskRouter gateway taking that provider's 4-second access tokens with no clock tolerance; and the
 * gateway under test, whose `tracker` upstream says `auth.oauth` with the configured client and whose
 * `plain` upstream is per_user without it.
 */
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway, tokenUsers } from '../helpers/gateway';
import type { OidcProvider } from '../helpers/oidc';
import { freePort, startOidcProvider } from '../helpers/oidc';

export const TOKENS = {
  alice: 'trp_alice-oauth-connect-0000000000000000',
  bob: 'trp_bob-oauth-connect-000000000000000000',
};
export const ADMIN = 'admin-token-oauth-connect-000000000000';
export const CLIENT = { id: 'taskrouter-front', secret: 'front-client-secret-0123456789abcdef' };

export interface OAuthConnectWorld {
  idp: OidcProvider;
  upstreamGw: TestGateway;
  gw: TestGateway;
  /** The gateway under test's base URL. */
  a: string;
  /** The upstream gateway's base URL. */
  b: string;
}

/**
 * The upstream gateway on port `port`: its project `tracker` takes `idp`'s access tokens (scope mcp:tools)
 * for team core (the provider's group devs); `issuer` adds to that issuer's settings.
 */
export function startOAuthUpstream(
  idp: OidcProvider,
  port: number,
  issuer: { clockToleranceSec?: number } = {},
): Promise<TestGateway> {
  return startTestGateway({
    config: {
      http: { host: '127.0.0.1', port, publicBaseUrl: `http://127.0.0.1:${port}` },
      oauth: {
        issuers: [
          { issuer: idp.issuer, requiredScopes: ['mcp:tools'], groupTeams: { devs: 'core' }, ...issuer },
        ],
      },
    },
    bootstrap: (url) => ({
      teams: [{ slug: 'core', members: [] }],
      projects: [
        { slug: 'tracker', team: 'core', namespacing: false, upstreams: [{ alias: 'example', url }] },
      ],
    }),
  });
}

/** Starts the provider and both gateways; the gateway under test's log lines go to `logs`. */
export async function startOAuthConnectWorld(logs: string[]): Promise<OAuthConnectWorld> {
  const [pa, pb] = [await freePort(), await freePort()];
  const a = `http://127.0.0.1:${pa}`;
  const b = `http://127.0.0.1:${pb}`;
  const idp = await startOidcProvider({
    users: { alice: { groups: ['devs'] }, bob: { groups: ['devs'] } },
    // Shorter than the renewal margin (60 s): every use of a connection renews it.
    resources: { [`${b}/v1/mcp/tracker`]: { ttl: 4 } },
    registration: false,
    clients: [
      {
        client_id: CLIENT.id,
        client_secret: CLIENT.secret,
        redirect_uris: [`${a}/v1/connect/callback`],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
  });
  // An expired access token is refused at once: a task outliving one must really renew it.
  const upstreamGw = await startOAuthUpstream(idp, pb, { clockToleranceSec: 0 });
  const gw = await startTestGateway({
    // No `connectUpstreams`: each upstream says for itself whether it is connected with OAuth.
    config: { http: { host: '127.0.0.1', port: pa, publicBaseUrl: a }, admin: { token: ADMIN } },
    logSink: (line) => logs.push(line),
    bootstrap: (url) => ({
      users: tokenUsers({ alice: TOKENS.alice, bob: TOKENS.bob }),
      teams: [{ slug: 'core', members: ['alice', 'bob'] }],
      projects: [
        {
          slug: 'front',
          team: 'core',
          upstreams: [
            {
              alias: 'tracker',
              url: `${b}/v1/mcp/tracker`,
              auth: { mode: 'per_user', oauth: { clientId: CLIENT.id, clientSecret: CLIENT.secret } },
            },
            // per_user without `oauth`: users' authorizations are granted by hand, never connected.
            { alias: 'plain', url, auth: { mode: 'per_user' } },
          ],
        },
      ],
    }),
  });
  return { idp, upstreamGw, gw, a, b };
}
