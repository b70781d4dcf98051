/**
 * Scale-out entry point: `tsx src/main/serve.ts api|worker|all` runs the gateway's roles as separate
 * processes against an existing Temporal cluster. Configuration comes from the JSON file named by
 * TASKROUTER_CONFIG (see config/taskrouter.example.json); keys may come from the environment instead.
 */
import { Connection } from '@temporalio/client';
import pino from 'pino';
import { loadConfigFile, parseConfig } from '../config/config';
import { ensureNamespaceAndSearchAttributes } from '../temporal/namespace';
import { SEARCH_ATTRIBUTES } from '../workflows/search-attributes';
import { keyringFromEnv } from './keyring';
import { startRuntime } from './runtime';

async function main(): Promise<void> {
  const role = process.argv[2] ?? 'all';
  if (!['api', 'worker', 'all'].includes(role)) throw new Error('usage: serve.ts api|worker|all');
  const file = process.env['TASKROUTER_CONFIG'];
  if (!file) throw new Error('TASKROUTER_CONFIG must name the configuration file');
  const input = loadConfigFile(file);
  const keyring = keyringFromEnv(process.env);
  const adminToken = process.env['TASKROUTER_ADMIN_TOKEN'];
  const config = parseConfig({
    ...input,
    ...(keyring && { encryption: keyring }),
    ...(adminToken && { admin: { token: adminToken } }),
  });
  const logger = pino({ level: process.env['LOG_LEVEL'] ?? 'info' });

  // Self-healing boot: a fresh cluster gets the namespace and search attributes the workflows need.
  const connection = await Connection.connect({ address: config.temporal.address });
  await ensureNamespaceAndSearchAttributes(connection, config.temporal.namespace, SEARCH_ATTRIBUTES);
  await connection.close();

  const runtime = await startRuntime({
    config,
    logger,
    api: role !== 'worker',
    worker: role !== 'api',
  });
  logger.info({ role, url: runtime.url }, 'taskrouter started');
  const stop = async () => {
    await runtime.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

main().catch((err: unknown) => {
  process.stderr.write(`taskrouter failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
