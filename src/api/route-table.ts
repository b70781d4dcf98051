/**
 * The route tables of the admin API and the dashboard API on @koa/router: each API declares its routes as
 * data (a method and a `:name` path, plus what it needs); the library matches a request's path and decodes
 * its parameters, and this says what the APIs answer when nothing matches (404; 405 with `Allow`) and how
 * a handler's reply is written. The APIs match before they dispatch because they settle things in between
 * (who asks, before revealing anything about the table; the body, after that).
 */
import Router from '@koa/router';
import type { Layer } from '@koa/router';
import type { Context } from 'koa';
import { HttpError } from './rest-errors';

export interface TableRoute {
  method: string;
  /** `/projects/:project/tasks`: each `:name` segment is a parameter. */
  path: string;
}

interface RouteMatch<R extends TableRoute> {
  route?: R;
  /** The route's parameters, decoded, in the order its path names them. */
  params: string[];
  /** Methods of the routes whose path matched (for 405 `Allow`). */
  allowed: string[];
}

export class RouteTable<R extends TableRoute> {
  private readonly router = new Router();
  private readonly routes = new Map<Layer, R>();

  constructor(routes: readonly R[], prefix = '') {
    for (const route of routes) {
      // Never dispatched through the router: matching is all it does here (see the module comment).
      const layer = this.router.register(`${prefix}${route.path}`, [route.method], () => undefined);
      this.routes.set(layer as Layer, route);
    }
  }

  private match(method: string, path: string): RouteMatch<R> {
    const found = this.router.match(path, method);
    // A GET route also answers HEAD (the library's rule); `Allow` lists the methods as declared.
    const allowed = [...new Set(found.path.flatMap((l) => l.methods).filter((m) => m !== 'HEAD'))];
    const layer = found.pathAndMethod.find((l) => this.routes.has(l));
    const route = layer && this.routes.get(layer);
    if (!layer || !route) return { params: [], allowed };
    const captures = layer.captures(path);
    // The library keeps a segment that does not decode as it came; this API refuses it.
    for (const raw of captures) {
      try {
        decodeURIComponent(raw);
      } catch {
        throw new HttpError('invalid', 'Malformed path');
      }
    }
    const named = layer.params(path, captures);
    return { route, params: layer.paramNames.map((key) => named[key.name] ?? ''), allowed };
  }

  /** The request's route and its parameters, or the 404 / 405 answer. */
  require(ctx: Context, what: string): { route: R; params: string[] } {
    const m = this.match(ctx.method, ctx.path);
    if (m.route) return { route: m.route, params: m.params };
    if (m.allowed.length > 0) {
      ctx.set('Allow', m.allowed.join(', '));
      throw new HttpError('invalid', `Method ${ctx.method} is not allowed here`, 405);
    }
    throw new HttpError('not_found', `No ${what} ${ctx.method} ${ctx.path}`);
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
