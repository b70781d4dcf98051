/**
 * `npm start`: the whole system in one process on its embedded default: a Temporal dev server with its
 * Web UI and a SQLite file, the SQLite store, the gateway API and worker, and the example upstream as
 * the demo project's server. Prints a working curl sequence.
 */
import path from 'node:path';
import pino from 'pino';
import { startExampleUpstream } from '../../examples/upstream/server';
import type { ConfigInput } from '../config/config';
import { parseConfig } from '../config/config';
import { findRepoRoot, resolveTemporalCli } from '../temporal/cli';
import { startDevServer } from '../temporal/dev-server';
import { SEARCH_ATTRIBUTES } from '../workflows/search-attributes';
import { keyringFromEnv, keyringFromFile } from './keyring';
import { startRuntime } from './runtime';
import { demoInstructions } from './demo-instructions';

async function main(): Promise<void> {
  const env = process.env;
  const root = findRepoRoot(__dirname);
  const dataDir = path.resolve(root, env['TASKROUTER_DATA_DIR'] ?? '.data');
  const logger = pino({ level: env['LOG_LEVEL'] ?? 'info' });
  const httpPort = Number(env['PORT'] ?? 8080);
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

  const input: ConfigInput = {
    http: { host: env['HOST'] ?? '127.0.0.1', port: httpPort },
    temporal: { address: temporal.address, namespace: temporal.namespace, taskQueue: 'taskrouter-tasks' },
    store: { sqliteFile: path.join(dataDir, 'taskrouter.db') },
    encryption: keyringFromEnv(env) ?? keyringFromFile(path.join(dataDir, 'keys.json')),
    projects: [{ slug: 'demo', upstreams: [{ alias: 'example', url: upstream.url }] }],
  };
  const runtime = await startRuntime({ config: parseConfig(input), logger, api: true, worker: true });

  process.stdout.write(
    demoInstructions({
      gatewayUrl: runtime.url ?? '',
      project: 'demo',
      upstreamUrl: upstream.url,
      temporalUiUrl: temporal.uiUrl,
    }),
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await runtime.close();
    await upstream.close();
    await temporal.stop();
    process.exit(0);
  };
  process.once('SIGINT', (s) => void stop(s));
  process.once('SIGTERM', (s) => void stop(s));
}

main().catch((err: unknown) => {
  process.stderr.write(`taskrouter failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
