/**
 * The small router the admin API and the dashboard API share: patterns with `:name` segments, 404 and
 * 405 (with `Allow`) answers, decoded path parameters, and how a handler's reply is written.
 */
import type { Context } from 'koa';
import { HttpError } from './rest-errors';

export interface RouteLike {
  method: string;
  pattern: RegExp;
}

/** `/projects/:project/tasks` → a regular expression capturing each `:name` segment. */
export function routePattern(pattern: string): RegExp {
  return new RegExp(`^${pattern.replace(/:[a-zA-Z]+/g, '([^/]+)')}/?$`);
}

export interface RouteMatch<R extends RouteLike> {
  route?: R;
  match?: RegExpExecArray;
  /** Methods of the routes whose path matched (for 405 `Allow`). */
  allowed: string[];
}

export function matchRoute<R extends RouteLike>(
  routes: readonly R[],
  method: string,
  path: string,
): RouteMatch<R> {
  const candidates = routes
    .map((route) => ({ route, match: route.pattern.exec(path) }))
    .filter((c) => c.match);
  const found = candidates.find((c) => c.route.method === method);
  return {
    ...(found && { route: found.route, match: found.match as RegExpExecArray }),
    allowed: candidates.map((c) => c.route.method),
  };
}

/** The matched route and its decoded parameters, or the 404 / 405 answer. */
export function requireRoute<R extends RouteLike>(
  ctx: Context,
  m: RouteMatch<R>,
  what: string,
): { route: R; params: string[] } {
  if (!m.route || !m.match) {
    if (m.allowed.length > 0) {
      ctx.set('Allow', m.allowed.join(', '));
      throw new HttpError('invalid', `Method ${ctx.method} is not allowed here`, 405);
    }
    throw new HttpError('not_found', `No ${what} ${ctx.method} ${ctx.path}`);
  }
  try {
    return { route: m.route, params: m.match.slice(1).map((s) => decodeURIComponent(s)) };
  } catch {
    throw new HttpError('invalid', 'Malformed path');
  }
}

/** What a handler returns: a body (200 unless `status` says otherwise), or nothing (204). */
export type Reply = { status?: number; body: unknown } | undefined;

export function writeReply(ctx: Context, reply: Reply): void {
  if (reply === undefined) {
    ctx.status = 204;
    return;
  }
  ctx.status = reply.status ?? 200;
  ctx.body = reply.body;
}
