/**
 * Connecting a `per_user` upstream with OAuth (`oauth.connectUpstreams`, docs/oauth.md): the gateway as
 * an OAuth 2.1 client of the upstream's authorization server, on behalf of the signed-in dashboard user.
 *
 * - `GET /v1/connect/{project}/{alias}` (a dashboard session; the user may call the project): discovers
 *   the upstream's protected-resource metadata (RFC 9728, from its 401 challenge or the well-known URL)
 *   and its authorization server's metadata (RFC 8414 / OpenID), picks the gateway's client there (the
 *   one the upstream names, `auth.oauth.clientId`; else the URL of the gateway's client metadata document
 *   when the server accepts those; else a dynamic registration, RFC 7591, made once; the last two kept in
 *   `upstream_oauth_clients`), and redirects to the authorization endpoint:
 *   authorization code + PKCE (S256) with `resource` = the upstream's resource (RFC 8707). The flow's
 *   secrets travel in a sealed, HttpOnly, SameSite=Lax cookie scoped to the callback, valid 10 minutes,
 *   naming the user, project and upstream it was started for.
 * - `GET /v1/connect/callback`: checks state, `iss` (RFC 9207) and that the same user is still signed in,
 *   exchanges the code, and records the access token as the user's authorization for that upstream
 *   (sealed with the key ring, with its expiry; the ordinary `per_user` machinery serves it, and the user
 *   or a project manager revokes it like any authorization). Then back to the dashboard.
 * - `GET /v1/connect/client-metadata.json`: the gateway's client metadata document (Client ID Metadata
 *   Documents draft), when published (`connect.clientMetadataDocument`, an https `publicBaseUrl`).
 *
 * With a refresh token, the authorization renews itself before the access token expires
 * (store/control-plane/renewal.ts); revoked, it is revoked at the authorization server too (RFC 7009,
 * main/upstream-renewal.ts).
 *
 * Every URL here comes from the upstream (its metadata names the authorization server and its
 * endpoints): for an upstream a project manager set, each request goes through the address policy
 * (`checkedVia`), so a connection cannot make the gateway call an internal address. A flow is bound to the
 * address the upstream had when it started: re-pointed meanwhile, the callback refuses it.
 */
import type { Context, Middleware } from 'koa';
import type { Dispatcher } from 'undici';
import type { ControlPlaneStore } from '../../store/control-plane';
import type { OAuthRegistration, UpstreamRecord } from '../../store/control-plane/types';
import { connectsWithOAuth } from '../../store/control-plane';
import { addressOf } from '../../store/control-plane/upstream-addresses';
import type { Cipher } from '../../store/cipher';
import type { DashboardStore } from '../../store/sessions/dashboard-store';
import type { KeptClient, OAuthClientStore } from '../../store/control-plane/oauth-clients';
import type { AuthorizationServerMetadata } from '../../upstream/oauth/metadata';
import { authorizationServerMetadata, protectedResourceMetadata } from '../../upstream/oauth/metadata';
import {
  authorizationUrl,
  checkResponseIssuer,
  exchangeCode,
  randomSecret,
  registerClient,
} from '../../upstream/oauth/client';
import { OAuthHttpError } from '../../upstream/oauth/http';
import { HttpError, restErrors } from '../rest-errors';
import { viewerOf } from './session';

const BASE = '/v1/connect';
const CALLBACK = `${BASE}/callback`;
const FLOW_COOKIE = 'taskrouter_connect';
const FLOW_AAD = 'upstream-connect-flow';
const FLOW_TTL_MS = 10 * 60_000;
const START = /^\/v1\/connect\/([a-z0-9][a-z0-9-]{0,49})\/([A-Za-z0-9_-]{1,64})$/;
const DOCUMENT = `${BASE}/client-metadata.json`;

export interface UpstreamConnectDeps {
  publicBaseUrl: string;
  controlPlane: Pick<
    ControlPlaneStore,
    | 'authenticate'
    | 'projectBySlug'
    | 'canCallProject'
    | 'grantUpstreamAuthorization'
    | 'attachRenewal'
    | 'upstreamOAuthClient'
    | 'recordOAuthRegistration'
  >;
  /** The URL of the gateway's client metadata document, when it is published (config/connect.ts). */
  clientMetadataDocumentUrl?: string;
  /** `client_name` in the document and in dynamic registrations. */
  clientName: string;
  /** Legacy `connectUpstreams`: every `per_user` upstream connects, not only those with `auth.oauth`. */
  connectAllPerUser?: boolean;
  dashboard: DashboardStore;
  clients: OAuthClientStore;
  cipher: Cipher;
  logger: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  /** Where requests for an upstream no operator approved go: the address policy's dispatcher. */
  checkedVia?: Dispatcher;
}

interface Flow {
  state: string;
  verifier: string;
  userId: string;
  project: string;
  alias: string;
  issuer: string;
  resource: string;
  /** The kept client (`upstream_oauth_clients` row) the flow runs with. */
  client: string;
  /** The upstream's address when the flow started: tokens are granted only for that address. */
  address: string;
  until: number;
}

export function upstreamConnect(deps: UpstreamConnectDeps): Middleware {
  const redirectUri = `${deps.publicBaseUrl}${CALLBACK}`;
  const viaFor = (upstream: UpstreamRecord) => (upstream.addressApproved ? undefined : deps.checkedVia);
  const answerErrors = restErrors({ realm: 'taskrouter', label: 'upstream connect', logger: deps.logger });

  /**
   * The gateway's client at the server, in the order the MCP specification gives (2026-07-28): the one
   * the upstream's configuration names (an operator's explicit choice), else the client metadata
   * document's URL where the server accepts those, else dynamic registration (docs/decisions.md).
   */
  async function clientAt(
    as: AuthorizationServerMetadata,
    upstream: UpstreamRecord,
    scope: string | undefined,
  ): Promise<{ client: KeptClient; registration: OAuthRegistration }> {
    if (upstream.auth.mode === 'per_user' && upstream.auth.oauth?.clientId !== undefined) {
      const configured = await deps.controlPlane.upstreamOAuthClient(upstream.id);
      if (configured) {
        const client = await deps.clients.saveConfigured(upstream.id, as.issuer, configured);
        return { client, registration: 'configured' };
      }
    }
    const document = deps.clientMetadataDocumentUrl;
    if (document !== undefined && as.clientIdMetadataDocumentSupported) {
      // A public client (token endpoint auth `none`) whose id is the document's URL: nothing to register.
      const key = `metadata-document:${document}`;
      const client =
        (await deps.clients.get(as.issuer, key)) ??
        (await deps.clients.save(as.issuer, key, { clientId: document }));
      return { client, registration: 'metadata_document' };
    }
    const known = await deps.clients.get(as.issuer, redirectUri);
    if (known) return { client: known, registration: 'dynamic' };
    const registered = await registerClient(as, {
      redirectUri,
      clientName: deps.clientName,
      ...(scope !== undefined && { scope }),
    });
    return { client: await deps.clients.save(as.issuer, redirectUri, registered), registration: 'dynamic' };
  }

  /** The client metadata document (CIMD draft): what an authorization server fetches at `client_id`. */
  function metadataDocument(ctx: Context, url: string): void {
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.type = 'application/json';
    ctx.body = {
      client_id: url,
      client_name: deps.clientName,
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  async function start(ctx: Context, slug: string, alias: string): Promise<void> {
    const viewer = await viewerOf(ctx, deps.controlPlane, deps.dashboard);
    const principal = { kind: 'user' as const, userId: viewer.user.id };
    const project = await deps.controlPlane.projectBySlug(slug);
    if (!project || !(await deps.controlPlane.canCallProject(principal, project))) {
      throw new HttpError('not_found', `Project "${slug}" not found`);
    }
    const upstream = project.upstreams.find((u) => u.alias === alias && u.enabled);
    if (!upstream) throw new HttpError('not_found', `Upstream "${alias}" not found in project "${slug}"`);
    if (!connectsWithOAuth(upstream, deps.connectAllPerUser)) {
      throw new HttpError('invalid', `Upstream "${alias}" is not connected with OAuth`);
    }
    const via = viaFor(upstream);
    const prm = await protectedResourceMetadata(upstream.url, via);
    const issuer = prm.authorizationServers[0] as string;
    const as = await authorizationServerMetadata(issuer, via);
    const scope = prm.scopesSupported?.join(' ');
    const { client, registration } = await clientAt(as, upstream, scope);
    // Shown on upstreams that say `auth.oauth` (not those connectable only through legacy `connectUpstreams`).
    const shown = upstream.auth.mode === 'per_user' ? upstream.auth.oauth : undefined;
    if (shown && shown.registration !== registration) {
      await deps.controlPlane.recordOAuthRegistration(upstream.id, registration);
    }
    const flow: Flow = {
      state: randomSecret(),
      verifier: randomSecret(),
      userId: viewer.user.id,
      project: slug,
      alias,
      issuer,
      resource: prm.resource,
      client: client.id,
      address: addressOf(upstream.url),
      until: Date.now() + FLOW_TTL_MS,
    };
    const url = authorizationUrl(as, {
      clientId: client.clientId,
      redirectUri,
      state: flow.state,
      codeVerifier: flow.verifier,
      resource: prm.resource,
      ...(scope !== undefined && { scope }),
    });
    ctx.cookies.set(FLOW_COOKIE, deps.cipher.sealJson(flow, FLOW_AAD).toString('base64url'), {
      httpOnly: true,
      sameSite: 'lax',
      secure: ctx.secure,
      path: CALLBACK,
      expires: new Date(flow.until),
      overwrite: true,
    });
    ctx.redirect(url);
  }

  function flowOf(ctx: Context): Flow {
    const sealed = ctx.cookies.get(FLOW_COOKIE);
    ctx.cookies.set(FLOW_COOKIE, '', { path: CALLBACK, expires: new Date(0), overwrite: true });
    if (sealed === undefined || sealed.length > 4096)
      throw new HttpError('forbidden', 'This connection was not started here');
    try {
      const flow = deps.cipher.openJson<Flow>(Buffer.from(sealed, 'base64url'), FLOW_AAD);
      if (!(flow.until > Date.now()))
        throw new HttpError('forbidden', 'The connection took too long; start again');
      return flow;
    } catch (err) {
      if (err instanceof HttpError) throw err;
      throw new HttpError('forbidden', 'This connection was not started here');
    }
  }

  async function callback(ctx: Context): Promise<void> {
    const flow = flowOf(ctx);
    const query = new URLSearchParams(ctx.querystring);
    if (query.get('state') !== flow.state)
      throw new HttpError('forbidden', 'This connection was not started here');
    const viewer = await viewerOf(ctx, deps.controlPlane, deps.dashboard);
    if (viewer.user.id !== flow.userId)
      throw new HttpError('forbidden', 'Signed in as someone else than who started this connection');
    const refused = query.get('error');
    if (refused !== null) {
      throw new HttpError(
        'forbidden',
        `The upstream's authorization server refused (${refused.slice(0, 60)})`,
      );
    }
    const code = query.get('code');
    if (code === null || code === '') throw new HttpError('invalid', 'The authorization server sent no code');
    // Tokens are for the address the flow started with: an upstream re-pointed meanwhile does not get them.
    const upstream = (await deps.controlPlane.projectBySlug(flow.project))?.upstreams.find(
      (u) => u.alias === flow.alias,
    );
    if (!upstream || addressOf(upstream.url) !== flow.address) {
      throw new HttpError('conflict', 'The upstream changed while you were connecting it; connect it again');
    }
    const as = await authorizationServerMetadata(flow.issuer, viaFor(upstream));
    checkResponseIssuer(as, query.get('iss'));
    const client = await deps.clients.byId(flow.client);
    if (!client || client.issuer !== as.issuer)
      throw new HttpError('forbidden', 'This connection was not started here');
    const tokens = await exchangeCode(as, client, {
      code,
      codeVerifier: flow.verifier,
      redirectUri,
      resource: flow.resource,
    });
    const granted = await deps.controlPlane.grantUpstreamAuthorization(
      { kind: 'user', userId: flow.userId },
      flow.project,
      flow.alias,
      {
        credential: tokens.accessToken,
        ...(tokens.expiresAt !== undefined && { expiresAt: new Date(tokens.expiresAt).toISOString() }),
      },
      { forAddress: flow.address },
    );
    if (tokens.refreshToken !== undefined) {
      await deps.controlPlane.attachRenewal(granted.id, {
        refreshToken: tokens.refreshToken,
        clientId: client.id,
        resource: flow.resource,
      });
    }
    ctx.redirect(`/dashboard/#/p/${encodeURIComponent(flow.project)}`);
  }

  return async (ctx, next) => {
    if (!ctx.path.startsWith(`${BASE}/`) || ctx.method !== 'GET') return next();
    if (ctx.path === DOCUMENT) {
      if (deps.clientMetadataDocumentUrl === undefined) return next();
      return metadataDocument(ctx, deps.clientMetadataDocumentUrl);
    }
    const match = START.exec(ctx.path);
    if (ctx.path !== CALLBACK && !match) return next();
    ctx.set('Cache-Control', 'no-store');
    await answerErrors(ctx, async () => {
      try {
        await (match ? start(ctx, match[1] as string, match[2] as string) : callback(ctx));
      } catch (err) {
        if (err instanceof OAuthHttpError) {
          deps.logger.warn({ err }, 'connecting an upstream failed');
          throw new HttpError('upstream_unavailable', `Connecting the upstream failed: ${err.message}`);
        }
        throw err;
      }
    });
  };
}
