/**
 * The dashboard's JSON API (docs/dashboard.md): sign-in sessions under `/v1/session`, a user's
 * projects and their tasks under `/v1/projects`, and the calls waiting for approval under
 * `/v1/approvals` (docs/approvals.md). Every task request re-checks, on that request, that the
 * viewer has a role on the project and what that role allows (src/gateway/tasks/task-access.ts). Answering
 * input and cancelling go through the gateway's own `tasks/update` / `tasks/cancel` code.
 *
 * This module is the API's front door (which paths it owns, who asks, the body, the error answers); the
 * routes live by concern in session-routes.ts, project-routes.ts, task-routes.ts,
 * task-control-routes.ts and approval-routes.ts, declared with route.ts and checked with access.ts.
 */
import type { Middleware } from 'koa';
import { readJson } from '../admin/http';
import { restErrors } from '../rest-errors';
import { RouteTable, writeReply } from '../route-table';
import { APPROVAL_ROUTES } from './approval-routes';
import { PROJECT_ROUTES } from './project-routes';
import { SESSION_ROUTES } from './session-routes';
import { viewerOf } from './session';
import { TASK_CONTROL_ROUTES } from './task-control-routes';
import { TASK_ROUTES } from './task-routes';
import type { DashboardApiDeps } from './route';

export type { DashboardApiDeps } from './route';

const MAX_BODY_BYTES = 256 * 1024;

const ROUTES = new RouteTable([
  ...SESSION_ROUTES,
  ...PROJECT_ROUTES,
  ...TASK_ROUTES,
  ...TASK_CONTROL_ROUTES,
  ...APPROVAL_ROUTES,
]);

export function dashboardApi(deps: DashboardApiDeps): Middleware {
  const answerErrors = restErrors({
    realm: 'taskrouter',
    label: 'dashboard API',
    ...(deps.logger && { logger: deps.logger }),
  });
  return async (ctx, next) => {
    if (!(
      ctx.path === '/v1/session' ||
      ctx.path === '/v1/projects' ||
      ctx.path.startsWith('/v1/projects/') ||
      ctx.path === '/v1/approvals' ||
      ctx.path.startsWith('/v1/approvals/')
    )) {
      return next();
    }
    ctx.set('Cache-Control', 'no-store');
    await answerErrors(ctx, async () => {
      const { route: found, params } = ROUTES.require(ctx, 'endpoint');
      // Who asks is settled before a body is read: strangers get 401, not a parse error.
      const viewer = found.signedIn ? await viewerOf(ctx, deps.controlPlane, deps.dashboard) : undefined;
      const body = ['POST', 'PUT', 'PATCH'].includes(ctx.method) ? await readJson(ctx, MAX_BODY_BYTES) : {};
      const query = new URLSearchParams(ctx.querystring);
      writeReply(ctx, await found.handler(deps, { ctx, params, body, query }, viewer));
    });
  };
}
