/**
 * `/healthz` (liveness), `/readyz` (readiness: the role's checks, src/telemetry/health.ts) and `/metrics`
 * (Prometheus text) for an HTTP app: the API's, or the internal health port's (main/health-port.ts).
 * `/metrics` names every project and upstream, so it is served only where `metrics` says: on the health
 * port always, on the API port only with a token or when configured public; with `token` it needs
 * `Authorization: Bearer <token>`. Elsewhere it is not there at all (404 like any unknown path).
 */
import type { Middleware } from 'koa';
import type { ReadinessCheck } from '../telemetry/health';
import { readiness } from '../telemetry/health';
import { metricsText } from '../telemetry/metrics';
import { secretsEqual } from '../store/control-plane/tokens';
import { bearerToken } from './authenticate';

export interface HealthDeps {
  checks?: Record<string, ReadinessCheck>;
  /** Reported by `/readyz` as `degraded` when true, without failing it (telemetry/health.ts). */
  degraded?: Record<string, () => boolean>;
  /** More exposition text appended to /metrics (the Temporal SDK's worker metrics). */
  extraMetrics?: () => Promise<string>;
  /** Serve `/metrics` here (with `token`: only to its bearer); absent, it is not served. */
  metrics?: { token?: string };
}

export function healthRoutes(deps: HealthDeps = {}): Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'GET') return next();
    if (ctx.path === '/healthz') {
      ctx.body = { ok: true };
      return;
    }
    if (ctx.path === '/readyz') {
      const r = await readiness(deps.checks ?? {}, deps.degraded);
      ctx.status = r.ready ? 200 : 503;
      ctx.body = r;
      return;
    }
    if (ctx.path === '/metrics' && deps.metrics) {
      const token = bearerToken(ctx.get('authorization')) ?? '';
      const wanted = deps.metrics.token;
      if (wanted !== undefined && !secretsEqual(token, wanted)) {
        ctx.status = 401;
        ctx.set('WWW-Authenticate', 'Bearer realm="metrics"');
        ctx.body = { error: { code: 'unauthorized', message: 'Send the metrics token as a bearer token' } };
        return;
      }
      ctx.type = 'text/plain; version=0.0.4; charset=utf-8';
      ctx.body = await metricsText(deps.extraMetrics);
      return;
    }
    await next();
  };
}
