/**
 * The gateway's HTTP request handler. The MCP endpoint, the hot path, runs on plain `node:http`;
 * everything else (health, the admin API under `/v1/admin`, the dashboard's API under `/v1/session` and
 * `/v1/projects` and its web UI under `/dashboard/`) goes through Koa.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa from 'koa';
import type { ControlPlaneStore } from '../store/control-plane';
import type { AdminApiDeps } from './admin';
import { adminApi } from './admin';
import type { DashboardApiDeps } from './dashboard/api';
import { dashboardApi } from './dashboard/api';
import { dashboardUi } from './dashboard/ui';
import type { McpEndpointDeps } from './mcp-endpoint';
import { mcpEndpoint } from './mcp-endpoint';

const MCP_PATH = /^\/v1\/mcp\/([^/?]+)\/?(?:\?.*)?$/;

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface AppDeps extends McpEndpointDeps {
  controlPlane: ControlPlaneStore;
  /** The instance administrator's token for `/v1/admin`. */
  adminToken?: string;
  /** Retention and project deletion through Temporal (absent in tests without a Temporal client). */
  admin?: Pick<AdminApiDeps, 'runRetention' | 'startProjectDeletion'>;
  /** The project dashboard (API and web UI); absent, neither is served. */
  dashboard?: Omit<DashboardApiDeps, 'gateway' | 'controlPlane' | 'logger'>;
  /** Trust X-Forwarded-* from a reverse proxy (secure session cookies behind TLS termination). */
  trustProxy?: boolean;
}

export function createApp(deps: AppDeps): RequestHandler {
  const mcp = mcpEndpoint(deps);
  const app = new Koa();
  app.proxy = deps.trustProxy ?? false;
  app.silent = true; // errors are logged by our own handlers, without request payloads
  app.use(async (ctx, next) => {
    if (ctx.path === '/healthz' && ctx.method === 'GET') {
      ctx.body = { ok: true };
      return;
    }
    await next();
  });
  app.use(
    adminApi({
      controlPlane: deps.controlPlane,
      ...(deps.adminToken !== undefined && { adminToken: deps.adminToken }),
      logger: deps.logger,
      ...deps.admin,
    }),
  );
  if (deps.dashboard) {
    app.use(
      dashboardApi({
        ...deps.dashboard,
        gateway: deps.gateway,
        controlPlane: deps.controlPlane,
        logger: deps.logger,
      }),
    );
    app.use(dashboardUi());
  }
  const koa = app.callback();
  return (req, res) => {
    const match = MCP_PATH.exec(req.url ?? '');
    const handled = match ? mcp(req, res, safeDecode(match[1] as string)) : koa(req, res);
    handled.catch((err: unknown) => {
      deps.logger.error({ err }, 'unhandled request failure');
      if (!res.headersSent) res.writeHead(500).end();
    });
  };
}

/** A malformed escape in the path is just an unknown project, never an exception. */
function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
