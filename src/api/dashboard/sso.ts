/**
 * Dashboard sign-in through the configured OpenID issuer (`oauth.dashboard`, docs/oauth.md): OpenID
 * Connect authorization code with PKCE (S256), `state`, `nonce` and the RFC 9207 `iss` check.
 *
 * - `GET /v1/session/sso`: `{ label }` for the sign-in page's button (404 when not configured).
 * - `GET /v1/session/sso/start`: a 302 to the issuer. What the callback must check (state, nonce, PKCE
 *   verifier) travels in a sealed, HttpOnly cookie bound to this browser, valid 10 minutes; nothing is
 *   stored server-side for a flow that is never finished. The cookie is SameSite=Lax: the issuer's
 *   redirect back is a cross-site top-level navigation, which a Strict cookie would not accompany.
 * - `GET /v1/session/sso/callback`: exchanges the code, verifies the ID token with the issuer's keys,
 *   finds or provisions the user like an access token does, opens a dashboard session (the same cookie
 *   and CSRF rules as token sign-in; it ends when the identity link goes) and redirects to the dashboard.
 *   A failure redirects to the sign-in page with a short reason; the issuer's tokens are never kept.
 */
import type { Context, Middleware } from 'koa';
import type { OAuthConfig } from '../../config/oauth';
import type { Cipher } from '../../store/cipher';
import type { DashboardStore } from '../../store/sessions/dashboard-store';
import type { AuthorizationServerMetadata } from '../../upstream/oauth/metadata';
import { authorizationServerMetadata } from '../../upstream/oauth/metadata';
import {
  authorizationUrl,
  checkResponseIssuer,
  exchangeCode,
  randomSecret,
} from '../../upstream/oauth/client';
import { OAuthHttpError } from '../../upstream/oauth/http';
import type { OAuthResourceServer } from '../oauth/resource-server';
import { TokenRefusal } from '../oauth/verifier';
import { SESSION_COOKIE, setSessionCookie } from './session';
import type { SsoView } from './view-types';

const FLOW_COOKIE = 'taskrouter_sso';
const FLOW_TTL_MS = 10 * 60_000;
const FLOW_AAD = 'dashboard-sso-flow';
const BASE = '/v1/session/sso';

type DashboardSsoConfig = NonNullable<OAuthConfig['dashboard']>;

export interface DashboardSsoDeps {
  config: DashboardSsoConfig;
  publicBaseUrl: string;
  oauth: OAuthResourceServer;
  identities: { identityId(issuer: string, subject: string): Promise<string | undefined> };
  dashboard: Pick<DashboardStore, 'openSession' | 'signOut' | 'user'>;
  cipher: Cipher;
  logger: { warn(obj: object, msg: string): void };
}

interface Flow {
  state: string;
  nonce: string;
  verifier: string;
  until: number;
}

export function dashboardSso(deps: DashboardSsoDeps): Middleware {
  const redirectUri = `${deps.publicBaseUrl}${BASE}/callback`;
  let metadata: Promise<AuthorizationServerMetadata> | undefined;
  const issuerMetadata = () => {
    metadata ??= authorizationServerMetadata(deps.config.issuer).catch((err: unknown) => {
      metadata = undefined;
      throw err;
    });
    return metadata;
  };

  async function start(ctx: Context): Promise<void> {
    const flow: Flow = {
      state: randomSecret(),
      nonce: randomSecret(),
      verifier: randomSecret(),
      until: Date.now() + FLOW_TTL_MS,
    };
    const url = authorizationUrl(await issuerMetadata(), {
      clientId: deps.config.clientId,
      redirectUri,
      state: flow.state,
      codeVerifier: flow.verifier,
      scope: deps.config.scopes.join(' '),
      nonce: flow.nonce,
    });
    ctx.cookies.set(FLOW_COOKIE, deps.cipher.sealJson(flow, FLOW_AAD).toString('base64url'), {
      httpOnly: true,
      sameSite: 'lax',
      secure: ctx.secure,
      path: `${BASE}/callback`,
      expires: new Date(flow.until),
      overwrite: true,
    });
    ctx.redirect(url);
  }

  function flowOf(ctx: Context): Flow {
    const sealed = ctx.cookies.get(FLOW_COOKIE);
    clearFlow(ctx);
    if (sealed === undefined || sealed.length > 4096)
      throw new SsoFailure('The sign-in was not started here');
    let flow: Flow;
    try {
      flow = deps.cipher.openJson(Buffer.from(sealed, 'base64url'), FLOW_AAD) as Flow;
    } catch {
      throw new SsoFailure('The sign-in was not started here');
    }
    if (!(flow.until > Date.now())) throw new SsoFailure('The sign-in took too long; try again');
    return flow;
  }

  async function callback(ctx: Context): Promise<void> {
    const flow = flowOf(ctx);
    const query = new URLSearchParams(ctx.querystring);
    if (query.get('state') !== flow.state) throw new SsoFailure('The sign-in was not started here');
    const refused = query.get('error');
    if (refused !== null) throw new SsoFailure(`The issuer refused the sign-in (${refused.slice(0, 60)})`);
    const code = query.get('code');
    if (code === null || code === '') throw new SsoFailure('The issuer sent no authorization code');
    const as = await issuerMetadata();
    checkResponseIssuer(as, query.get('iss'));
    const tokens = await exchangeCode(
      as,
      {
        clientId: deps.config.clientId,
        ...(deps.config.clientSecret !== undefined && { clientSecret: deps.config.clientSecret }),
      },
      { code, codeVerifier: flow.verifier, redirectUri },
    );
    if (tokens.idToken === undefined) throw new SsoFailure('The issuer sent no ID token');
    const verified = await deps.oauth.verifier.verifyIdToken(
      tokens.idToken,
      deps.config.issuer,
      deps.config.clientId,
      flow.nonce,
    );
    const userId = await deps.oauth.userOf(verified);
    const identity = userId && (await deps.identities.identityId(deps.config.issuer, verified.subject));
    const user = userId && (await deps.dashboard.user(userId));
    if (!user || !identity) throw new SsoFailure('This account has no TaskRouter user');
    const opened = await deps.dashboard.openSession(user, { tokenId: identity, expiresAt: null });
    const previous = ctx.cookies.get(SESSION_COOKIE);
    if (previous !== undefined) await deps.dashboard.signOut(previous);
    setSessionCookie(ctx, opened.secret, opened.session.expiresAt);
    ctx.redirect('/dashboard/');
  }

  function clearFlow(ctx: Context): void {
    ctx.cookies.set(FLOW_COOKIE, '', { path: `${BASE}/callback`, expires: new Date(0), overwrite: true });
  }

  return async (ctx, next) => {
    if (!ctx.path.startsWith(BASE) || ctx.method !== 'GET') return next();
    ctx.set('Cache-Control', 'no-store');
    if (ctx.path === BASE) {
      ctx.body = { label: deps.config.label } satisfies SsoView;
      return;
    }
    if (ctx.path !== `${BASE}/start` && ctx.path !== `${BASE}/callback`) return next();
    try {
      await (ctx.path === `${BASE}/start` ? start(ctx) : callback(ctx));
    } catch (err) {
      const reason = reasonOf(err);
      if (reason === undefined) throw err;
      if (!(err instanceof SsoFailure))
        deps.logger.warn({ err }, 'dashboard sign-in through the issuer failed');
      ctx.redirect(`/dashboard/?sso_error=${encodeURIComponent(reason)}#/signin`);
    }
  };
}

/** A sign-in that cannot go on, with what the person is told. */
class SsoFailure extends Error {
  override readonly name = 'SsoFailure';
}

function reasonOf(err: unknown): string | undefined {
  if (err instanceof SsoFailure) return err.message;
  if (err instanceof TokenRefusal) return 'The issuer sent an ID token that does not verify';
  if (err instanceof OAuthHttpError) return 'The issuer could not complete the sign-in';
  if (err instanceof Error && err.name === 'IssuerUnavailable') return 'The issuer cannot be reached';
  return undefined;
}
