/**
 * The gateway's HTTP application: one Koa app for the MCP endpoint (the hot path, first in line), health
 * and metrics,
 * the admin API under `/v1/admin`, and the dashboard (its API under `/v1/session`, `/v1/projects` and
 * `/v1/approvals`, its web UI under `/dashboard/`). Each part is a middleware that passes on what is not its path.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa from 'koa';
import type { ControlPlaneStore } from '../store/control-plane';
import type { AdminApiDeps } from './admin';
import { adminApi } from './admin';
import type { DashboardApiDeps } from './dashboard/api';
import { dashboardApi } from './dashboard/api';
import { dashboardUi } from './dashboard/ui';
import type { HealthDeps } from './health';
import { healthRoutes } from './health';
import type { McpEndpointDeps } from './mcp/endpoint';
import { mcpEndpoint } from './mcp/endpoint';

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface AppDeps extends McpEndpointDeps {
  controlPlane: ControlPlaneStore;
  /** The instance administrator's token for `/v1/admin`. */
  adminToken?: string;
  /** Retention and project deletion through Temporal (absent in tests without a Temporal client). */
  admin?: Pick<
    AdminApiDeps,
    'runRetention' | 'startProjectDeletion' | 'probeUpstream' | 'knownTools' | 'approvals'
  >;
  /** The project dashboard (API and web UI); absent, neither is served. */
  dashboard?: Omit<DashboardApiDeps, 'gateway' | 'controlPlane' | 'logger'>;
  /** Dashboard sign-in through the OpenID issuer (dashboard/sso.ts); absent, token sign-in only. */
  dashboardSso?: Koa.Middleware;
  /** Connecting `per_user` upstreams with OAuth (dashboard/connect.ts); absent, not offered. */
  upstreamConnect?: Koa.Middleware;
  /** Trust X-Forwarded-* from a reverse proxy (secure session cookies behind TLS termination). */
  trustProxy?: boolean;
  /** `/readyz` checks and `/metrics` (without them: liveness only, and metrics open). */
  health?: HealthDeps;
}

/**
 * An answer given before the request body was read (401, 413, 415, …) closes the connection: otherwise
 * Node keeps reading and discarding the rest of the body, and a slow or huge one holds the connection
 * (and delays the next request on it) for as long as the client cares to send it.
 */
const closeUnreadBodies: Koa.Middleware = async (ctx, next) => {
  await next();
  if (!ctx.req.complete && !ctx.res.headersSent) ctx.set('Connection', 'close');
};

const CLIENT_GONE = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE']);

function isClientGone(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code !== undefined && CLIENT_GONE.has(code);
}

export function createApp(deps: AppDeps): RequestHandler {
  const app = new Koa();
  app.proxy = deps.trustProxy ?? false;
  app.silent = true; // errors are logged by our own handlers, without request payloads
  app.on('error', (err: unknown) => {
    // A client that hangs up mid-request or mid-stream is not a failure of ours (a stalled reader the
    // stream bounds cut off, a client that gave up): logged quietly, so errors stay for our own faults.
    if (isClientGone(err))
      deps.logger.debug({ code: (err as NodeJS.ErrnoException).code }, 'client went away');
    else deps.logger.error({ err }, 'unhandled request failure');
  });
  app.use(closeUnreadBodies);
  app.use(mcpEndpoint(deps));
  if (deps.oauth) app.use(deps.oauth.metadataRoute());
  app.use(healthRoutes(deps.health));
  app.use(
    adminApi({
      controlPlane: deps.controlPlane,
      ...(deps.adminToken !== undefined && { adminToken: deps.adminToken }),
      logger: deps.logger,
      ...deps.admin,
    }),
  );
  if (deps.dashboard) {
    if (deps.dashboardSso) app.use(deps.dashboardSso);
    if (deps.upstreamConnect) app.use(deps.upstreamConnect);
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
  const handle = app.callback();
  return (req, res) => {
    void handle(req, res);
  };
}
