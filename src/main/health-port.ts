/**
 * The internal health port (`health.port`, docs/operators.md): `/healthz`, `/readyz` and `/metrics` on a
 * small HTTP server of the process's own, whatever roles it runs. It is where Prometheus scrapes by
 * default: `/metrics` names every project and upstream, so the API port (the public surface) serves it
 * only with `health.metricsToken` or `health.publicMetrics` (api-role.ts). A worker-only process has no
 * other port at all.
 */
import Koa from 'koa';
import { healthRoutes } from '../api/health';
import { temporalMetricsText } from '../telemetry/temporal-metrics';
import { listen } from './http-server';
import type { Shared } from './roles';

export async function startHealthPort(shared: Shared, port: number) {
  const { config } = shared;
  const app = new Koa();
  app.silent = true;
  app.use(
    healthRoutes({
      checks: shared.readiness,
      degraded: shared.degraded,
      extraMetrics: temporalMetricsText,
      metrics: config.health.metricsToken !== undefined ? { token: config.health.metricsToken } : {},
    }),
  );
  const handle = app.callback();
  const server = await listen(
    (req, res) => {
      void handle(req, res);
    },
    config.health.host,
    port,
    // Health and metrics only: the same request timeouts as the API port.
    config.http,
  );
  // A manager's upstream pointed at this port is the gateway calling itself (address-policy.ts).
  shared.addressPolicy.addOwnPort(Number(new URL(server.url).port));
  shared.logger.info({ url: server.url }, 'health and metrics');
  return server;
}
