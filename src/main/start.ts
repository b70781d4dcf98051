/**
 * `npm start`: the whole system in one process on its embedded default: a Temporal dev server with its
 * Web UI and a SQLite file, the SQLite store, the gateway API and worker, and the example upstream as
 * the demo project's server. Prints a working curl sequence.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { logMixin } from '../telemetry/log-context';
import { startExampleUpstream } from '../../examples/upstream/server';
import type { ConfigInput } from '../config/config';
import { parseConfig } from '../config/config';
import { findRepoRoot } from '../config/paths';
import { resolveTemporalCli } from '../tooling/temporal-cli';
import { startDevServer } from '../tooling/temporal-dev-server';
import { SEARCH_ATTRIBUTES } from '../workflows/search-attributes';
import { keyringFromEnv, keyringFromFile } from './keyring';
import { startRuntime } from './runtime';
import { mintToken } from '../store/control-plane/tokens';
import { demoInstructions } from './demo-instructions';
import { handleStopSignals } from './signals';

async function main(): Promise<void> {
  const env = process.env;
  const root = findRepoRoot(__dirname);
  const dataDir = path.resolve(root, env['TASKROUTER_DATA_DIR'] ?? '.data');
  const logger = pino({ level: env['LOG_LEVEL'] ?? 'info', mixin: logMixin });
  const httpPort = Number(env['PORT'] ?? 8080);
  // Metrics are not on the public API port (they name every project and upstream): the health port has them.
  const healthPort = Number(env['HEALTH_PORT'] ?? httpPort + 1);
  const upstreamPort = Number(env['UPSTREAM_PORT'] ?? 3001);
  const temporalPort = Number(env['TEMPORAL_PORT'] ?? 7233);

  logger.info('resolving the Temporal CLI (installed into .tools/ on first run)');
  const cliPath = await resolveTemporalCli({ install: true, log: (m) => logger.info(m) });
  const temporal = await startDevServer({
    cliPath,
    namespace: 'taskrouter',
    dbFile: path.join(dataDir, 'temporal.db'),
    port: temporalPort,
    ui: true,
    searchAttributes: SEARCH_ATTRIBUTES,
  });
  const upstream = await startExampleUpstream({ port: upstreamPort });

  const demo = demoBootstrap(dataDir, upstream.url);
  const input: ConfigInput = {
    http: { host: env['HOST'] ?? '127.0.0.1', port: httpPort },
    temporal: {
      address: temporal.address,
      namespace: temporal.namespace,
      taskQueue: 'taskrouter-tasks',
      ...(temporal.uiUrl !== undefined && { uiUrl: temporal.uiUrl }),
    },
    store: { sqliteFile: path.join(dataDir, 'taskrouter.db') },
    encryption: keyringFromEnv(env) ?? keyringFromFile(path.join(dataDir, 'keys.json')),
    admin: { token: demo.adminToken },
    bootstrapFile: demo.file,
    health: { port: healthPort },
  };
  const config = parseConfig(input);
  const runtime = await startRuntime({ config, logger, api: true, worker: true });

  process.stdout.write(
    demoInstructions({
      gatewayUrl: runtime.url ?? '',
      project: 'demo',
      token: demo.userToken,
      upstreamUrl: upstream.url,
      temporalUiUrl: temporal.uiUrl,
      metricsUrl: `http://${config.health.host}:${healthPort}/metrics`,
    }),
  );

  handleStopSignals(logger, config.shutdownGraceMs, async () => {
    await runtime.close({ graceful: true });
    await upstream.close();
    await temporal.stop();
  });
}

/**
 * The demo tenant, applied through the declarative bootstrap: team `demo` with user `demo` (whose
 * personal access token the curl example uses) and project `demo` on the example upstream. Secrets are
 * made once and kept under .data/ (mode 600), so restarts keep working with the same token.
 */
function demoBootstrap(dataDir: string, upstreamUrl: string) {
  const secretsFile = path.join(dataDir, 'demo-secrets.json');
  if (!existsSync(secretsFile)) {
    mkdirSync(dataDir, { recursive: true });
    const secrets = { userToken: mintToken('trp_'), adminToken: randomBytes(24).toString('base64url') };
    writeFileSync(secretsFile, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  }
  const secrets = JSON.parse(readFileSync(secretsFile, 'utf8')) as { userToken: string; adminToken: string };
  const file = path.join(dataDir, 'bootstrap.json');
  writeFileSync(
    file,
    JSON.stringify({
      users: [{ handle: 'demo', name: 'Demo user', tokens: [{ name: 'demo', token: secrets.userToken }] }],
      teams: [{ slug: 'demo', name: 'Demo team', members: ['demo'] }],
      projects: [{ slug: 'demo', team: 'demo', upstreams: [{ alias: 'example', url: upstreamUrl }] }],
    }),
    { mode: 0o600 },
  );
  return { file, ...secrets };
}

main().catch((err: unknown) => {
  process.stderr.write(`taskrouter failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
