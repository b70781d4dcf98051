/**
 * Routes the Temporal SDK's own logs (TypeScript and native core) into the gateway's pino logger, and,
 * when asked, has its core serve its worker metrics in Prometheus form on a loopback port (appended to
 * the role's `/metrics`, src/telemetry/temporal-metrics.ts). The runtime is process-wide and can be
 * installed once, so the first caller wins. A failed install (core could not bind the metrics port) leaves
 * nothing installed, so the caller may try again with another port.
 */
import type { LogLevel, LogMetadata } from '@temporalio/common';
import { Runtime } from '@temporalio/worker';
import type { Logger } from 'pino';
import { setTemporalMetricsUrl } from '../telemetry/temporal-metrics';

let installed = false;

const PINO_LEVEL: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

export function installTemporalLogging(
  logger: Logger,
  opts: { level?: LogLevel; metricsPort?: number } = {},
): void {
  if (installed) return;
  const level = opts.level ?? 'WARN';
  const metricsAddress = opts.metricsPort !== undefined ? `127.0.0.1:${opts.metricsPort}` : undefined;
  const log = (l: LogLevel, message: string, meta?: LogMetadata) =>
    logger[PINO_LEVEL[l]]({ temporal: meta }, message);
  Runtime.install({
    logger: {
      log,
      trace: (m, meta) => log('TRACE', m, meta),
      debug: (m, meta) => log('DEBUG', m, meta),
      info: (m, meta) => log('INFO', m, meta),
      warn: (m, meta) => log('WARN', m, meta),
      error: (m, meta) => log('ERROR', m, meta),
    },
    // "Activity not found on completion" is the expected echo of a watch activity that was cancelled
    // (TRY_CANCEL) and finished anyway; core reports it at WARN, so core logs start at ERROR.
    telemetryOptions: {
      logging: { filter: { core: 'ERROR', other: level }, forward: {} },
      ...(metricsAddress && { metrics: { prometheus: { bindAddress: metricsAddress } } }),
    },
  });
  installed = true;
  if (metricsAddress) setTemporalMetricsUrl(`http://${metricsAddress}/metrics`);
}
