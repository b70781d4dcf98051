/**
 * Starts ONE in-memory Temporal dev server for the whole jest run (all workers share it) and publishes its
 * address via process.env (inherited by workers, which are forked after this runs) and a JSON file.
 */
import { writeFileSync } from 'node:fs';
import { resolveTemporalCli } from '../src/temporal/cli';
import { startDevServer, type DevServer } from '../src/temporal/dev-server';
import { SEARCH_ATTRIBUTES } from '../src/workflows/search-attributes';
import { defaultTestInfoFile } from './helpers/temporal';

export const TEST_NAMESPACE = 'taskrouter-test';

/** What the teardown needs; globalSetup and globalTeardown run in the same (main) jest process. */
export interface SharedTemporalServer {
  pid: number;
  infoFile: string;
  server?: DevServer;
}

export const GLOBAL_KEY = '__taskrouterTemporalTestServer';

export function sharedServerSlot(): { [GLOBAL_KEY]?: SharedTemporalServer } {
  return globalThis as { [GLOBAL_KEY]?: SharedTemporalServer };
}

export default async function globalSetup(): Promise<void> {
  const log = (msg: string): void => void process.stderr.write(`[temporal] ${msg}\n`);
  const cliPath = await resolveTemporalCli({ install: true, log });
  const started = Date.now();
  const server = await startDevServer({
    cliPath,
    namespace: TEST_NAMESPACE,
    searchAttributes: SEARCH_ATTRIBUTES,
    // Small enough that tests see continueAsNewSuggested after a few dozen events.
    dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 60 },
  });
  log(
    `dev server pid ${server.pid} ready at ${server.address} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );

  const infoFile = process.env['TEMPORAL_TEST_INFO'] || defaultTestInfoFile();
  writeFileSync(
    infoFile,
    JSON.stringify({ address: server.address, namespace: server.namespace, pid: server.pid }),
  );
  process.env['TEMPORAL_TEST_ADDRESS'] = server.address;
  process.env['TEMPORAL_TEST_NAMESPACE'] = server.namespace;
  process.env['TEMPORAL_TEST_INFO'] = infoFile;
  sharedServerSlot()[GLOBAL_KEY] = { pid: server.pid, infoFile, server };
}
