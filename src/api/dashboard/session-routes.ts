/**
 * Signing in and out of the dashboard (`/v1/session`): a user token is exchanged for a browser session
 * cookie; the token itself is never kept by the browser.
 */
import { z } from 'zod';
import { parse } from '../../store/control-plane';
import { HttpError } from '../rest-errors';
import { ok, route, viewerRoute } from './route';
import type { SessionView } from './view-types';
import { clearSessionCookie, requireSameOrigin, SESSION_COOKIE, setSessionCookie } from './session';

const SignInBody = z.strictObject({ token: z.string().min(1).max(512) });

export const SESSION_ROUTES = [
  route('POST', '/v1/session', async (deps, req) => {
    requireSameOrigin(req.ctx);
    const { token } = parse(SignInBody, req.body);
    const checked = await deps.controlPlane.userToken(token);
    const user = checked && (await deps.dashboard.user(checked.userId));
    if (!checked || !user) throw new HttpError('unauthorized', 'Unknown, revoked or expired user token');
    const opened = await deps.dashboard.openSession(user, checked);
    // A sign-in replaces the browser's previous session rather than leaving it behind.
    const previous = req.ctx.cookies.get(SESSION_COOKIE);
    if (previous !== undefined) await deps.dashboard.signOut(previous);
    setSessionCookie(req.ctx, opened.secret, opened.session.expiresAt);
    return ok({ user: opened.session.user, csrfToken: opened.session.csrfToken } satisfies SessionView);
  }),
  viewerRoute('GET', '/v1/session', async (_deps, _req, viewer) =>
    ok({
      user: viewer.user,
      ...(viewer.csrfToken !== undefined && { csrfToken: viewer.csrfToken }),
    } satisfies SessionView),
  ),
  viewerRoute('DELETE', '/v1/session', async (deps, req) => {
    const secret = req.ctx.cookies.get(SESSION_COOKIE);
    if (secret !== undefined) await deps.dashboard.signOut(secret);
    clearSessionCookie(req.ctx);
    return undefined;
  }),
];
