/**
 * The admin API: JSON over HTTP under `/v1/admin`. The caller is the instance administrator (admin token
 * from configuration) or a user (personal access token); every operation enforces the roles table in
 * `ControlPlaneStore`. Responses never carry hashes or credentials; tokens and keys appear once, in the
 * response that created them. The routes come from the table of operations (./operations): this module
 * authenticates, matches, reads the body and writes the reply. See docs/admin.md.
 */
import type { Context, Middleware } from 'koa';
import type { ControlPlaneStore } from '../../store/control-plane';
import { RouteTable, writeReply } from '../route-table';
import { restErrors } from '../rest-errors';
import { principalOf, readJson } from './http';
import { ADMIN_OPERATIONS } from './operations';
import type { OperationDeps } from './operations';
import { adminRoutes } from './operations/http';

export interface AdminApiDeps extends Omit<OperationDeps, 'bootstrap'> {
  controlPlane: ControlPlaneStore;
  /** `admin.token` from configuration; without it only user tokens are accepted. */
  adminToken?: string;
  /** Largest accepted request body (default 64 KiB). */
  maxBodyBytes?: number;
}

const PREFIX = '/v1/admin';
const ROUTES = new RouteTable(adminRoutes(ADMIN_OPERATIONS), PREFIX);

export function adminApi(deps: AdminApiDeps): Middleware {
  const limit = deps.maxBodyBytes ?? 64 * 1024;
  const answerErrors = restErrors({
    realm: 'taskrouter-admin',
    label: 'admin API',
    ...(deps.logger && { logger: deps.logger }),
  });
  return async (ctx: Context, next) => {
    if (ctx.path !== PREFIX && !ctx.path.startsWith(`${PREFIX}/`)) return next();
    ctx.set('Cache-Control', 'no-store');
    await answerErrors(ctx, async () => {
      // Authenticate before revealing anything about the route table.
      const actor = await principalOf(ctx, deps.controlPlane, deps.adminToken);
      const { route: found, params } = ROUTES.require(ctx, 'admin endpoint');
      const body = ['POST', 'PUT', 'PATCH'].includes(ctx.method) ? await readJson(ctx, limit) : {};
      const query = new URLSearchParams(ctx.querystring);
      writeReply(ctx, await found.handler(deps.controlPlane, { actor, params, body, query }, deps));
    });
  };
}
