/**
 * Scale-out entry point: `node --max-semi-space-size=16 dist/src/main/serve.js api|worker|all` (`npm run
 * serve -- …`; the gateway's Node flags: src/config/node-flags.ts) runs the
 * gateway's roles as separate processes against an existing Temporal cluster. Configuration comes from
 * the JSON file named by TASKROUTER_CONFIG (see config/taskrouter.example.json); keys, the PostgreSQL URL
 * and the admin token may come from the environment instead (keyring.ts).
 *
 * The configuration is checked before anything else is loaded or connected: a bad file ends the process
 * at once, naming the file and each offending field. SIGTERM/SIGINT stop it gracefully (runtime.ts).
 */
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { ConfigError, loadConfigFile, parseConfig } from '../config/config';
import type { Config } from '../config/config';
import { withSecretsFromEnv } from './keyring';
import type { Runtime } from './runtime';
import { handleStopSignals } from './signals';
import { logMixin } from '../telemetry/log-context';
import { startTracing } from '../telemetry/tracing';

const ROLES = ['api', 'worker', 'all'] as const;

function configFromEnv(env: NodeJS.ProcessEnv): Config {
  const file = env['TASKROUTER_CONFIG'];
  if (!file) throw new ConfigError('TASKROUTER_CONFIG must name the configuration file');
  const input = withSecretsFromEnv(loadConfigFile(file), env);
  const adminToken = env['TASKROUTER_ADMIN_TOKEN'];
  // Each process serves the internal health port, so two roles on one host with one configuration
  // file need a port each: TASKROUTER_HEALTH_PORT sets this process's.
  const healthPort = env['TASKROUTER_HEALTH_PORT'];
  return parseConfig(
    {
      ...input,
      ...(adminToken && { admin: { token: adminToken } }),
      ...(healthPort !== undefined && { health: { ...input.health, port: Number(healthPort) } }),
    },
    file,
  );
}

async function main(): Promise<void> {
  const role = process.argv[2] ?? 'all';
  if (!ROLES.includes(role as (typeof ROLES)[number])) throw new Error('usage: serve api|worker|all');
  const config = configFromEnv(process.env);
  const configured = performance.now();
  // Before anything it instruments (http, undici) is loaded.
  const stopTracing = await startTracing(`taskrouter-${role}`);

  const logger = pino({ level: process.env['LOG_LEVEL'] ?? 'info', mixin: logMixin });
  // From here on a signal stops the gateway gracefully, even one that comes while it is still starting.
  const gateway: { starting?: Promise<Runtime> } = {};
  handleStopSignals(logger, config.shutdownGraceMs, async () => {
    if (gateway.starting) await (await gateway.starting).close({ graceful: true });
    await stopTracing?.();
  });
  const { startRuntime } = await import('./runtime');
  gateway.starting = startRuntime({
    config,
    logger,
    api: role !== 'worker',
    worker: role !== 'api',
    ensureNamespace: true,
  });
  const runtime = await gateway.starting;
  const startupMs = { configured: Math.round(configured), ...runtime.startup };
  logger.info({ role, url: runtime.url, startupMs }, 'taskrouter started');
}

main().catch((err: unknown) => {
  process.stderr.write(`taskrouter failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
