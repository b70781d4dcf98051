/**
 * Who is looking at the dashboard: a user with a personal access token (`Authorization: Bearer trp_…`,
 * for scripts) or a browser session opened with one (an HttpOnly, SameSite=Strict cookie). A
 * state-changing request on a session must also carry the session's CSRF token in `X-CSRF-Token`; bearer
 * requests need none (the browser never adds that header by itself).
 */
import type { Context } from 'koa';
import type { ControlPlane } from '../../store/control-plane/types';
import type { DashboardStore, DashboardUser } from '../../store/sessions/dashboard-store';
import { secretsEqual } from '../../store/control-plane/tokens';
import { HttpError } from '../rest-errors';
import { bearerToken } from '../authenticate';

export const SESSION_COOKIE = 'taskrouter_session';
export const CSRF_HEADER = 'x-csrf-token';

export interface Viewer {
  user: DashboardUser;
  /** Set for cookie sessions: what `X-CSRF-Token` must carry on state-changing requests. */
  csrfToken?: string;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export async function viewerOf(
  ctx: Context,
  controlPlane: Pick<ControlPlane, 'authenticate'>,
  dashboard: DashboardStore,
): Promise<Viewer> {
  const authorization = ctx.get('authorization');
  if (authorization !== '') {
    const token = bearerToken(authorization);
    const principal = token === undefined ? undefined : await controlPlane.authenticate(token);
    const user = principal?.kind === 'user' ? await dashboard.user(principal.userId) : undefined;
    if (!user) throw new HttpError('unauthorized', 'Unknown, revoked or expired user token');
    return { user };
  }
  const secret = ctx.cookies.get(SESSION_COOKIE);
  const session = secret === undefined ? undefined : await dashboard.session(secret);
  if (!session) throw new HttpError('unauthorized', 'Sign in with a user token');
  if (!SAFE_METHODS.has(ctx.method)) {
    requireSameOrigin(ctx);
    const sent = ctx.get(CSRF_HEADER);
    if (sent === '' || !secretsEqual(sent, session.csrfToken)) {
      throw new HttpError('forbidden', 'Missing or wrong CSRF token (X-CSRF-Token)');
    }
  }
  return { user: session.user, csrfToken: session.csrfToken };
}

/**
 * Defence in depth next to SameSite cookies and the CSRF token: a browser's state-changing request that
 * names its Origin must come from the gateway's own origin (clients without an Origin header pass).
 */
export function requireSameOrigin(ctx: Context): void {
  const origin = ctx.get('origin');
  if (origin === '') return;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    throw new HttpError('forbidden', 'Malformed Origin header');
  }
  if (host !== ctx.host) throw new HttpError('forbidden', 'Cross-origin requests are not accepted');
}

export function setSessionCookie(ctx: Context, secret: string, expiresAt: string): void {
  ctx.cookies.set(SESSION_COOKIE, secret, {
    httpOnly: true,
    sameSite: 'strict',
    // Marked Secure when the request came over HTTPS (directly, or through a trusted proxy).
    secure: ctx.secure,
    path: '/',
    expires: new Date(expiresAt),
    overwrite: true,
  });
}

export function clearSessionCookie(ctx: Context): void {
  ctx.cookies.set(SESSION_COOKIE, '', {
    httpOnly: true,
    sameSite: 'strict',
    secure: ctx.secure,
    path: '/',
    expires: new Date(0),
    overwrite: true,
  });
}
