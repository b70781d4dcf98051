/**
 * Starts ONE in-memory Temporal dev server and (unless only SQLite is under test) ONE throwaway PostgreSQL
 * cluster for the whole jest run (all workers and both database projects share them), and publishes their
 * addresses via process.env (inherited by workers, which are forked after this runs) and a JSON file.
 * Also compiles the dashboard's browser code when it is missing or stale (scripts/build-ui.mjs), which
 * the gateways the tests start serve from dist/browser/.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findPostgresBinDir, startPostgresDev, type PostgresDevServer } from '../src/tooling/postgres';
import { findRepoRoot } from '../src/config/paths';
import { resolveTemporalCli } from '../src/tooling/temporal-cli';
import { startDevServer, type DevServer } from '../src/tooling/temporal-dev-server';
import { SEARCH_ATTRIBUTES } from '../src/workflows/search-attributes';
import { findChromium } from './helpers/browser';
import { defaultTestInfoFile } from './helpers/temporal';

export const TEST_NAMESPACE = 'taskrouter-test';

/** What the teardown needs; globalSetup and globalTeardown run in the same (main) jest process. */
export interface SharedTemporalServer {
  pid: number;
  infoFile: string;
  server?: DevServer;
  postgres?: PostgresDevServer;
  /** Scratch directory of the run (SQLite files of testStoreConfig()), removed by the teardown. */
  scratchDir?: string;
}

export const GLOBAL_KEY = '__taskrouterTemporalTestServer';

export function sharedServerSlot(): { [GLOBAL_KEY]?: SharedTemporalServer } {
  return globalThis as { [GLOBAL_KEY]?: SharedTemporalServer };
}

/** PostgreSQL is needed unless TASKROUTER_TEST_DB=sqlite (see jest.config.js). */
function postgresUnderTest(): boolean {
  return process.env['TASKROUTER_TEST_DB'] !== 'sqlite';
}

/**
 * The server binaries come from the Debian packages. When they are missing (`npm ci && npm test` on a
 * fresh machine), root installs them with the same script CI runs; anyone else gets told how.
 */
function ensurePostgresInstalled(log: (msg: string) => void): void {
  if (findPostgresBinDir() !== undefined) return;
  const script = path.join(findRepoRoot(__dirname), 'scripts', 'install-postgres.sh');
  if (process.getuid?.() !== 0) {
    throw new Error(
      'PostgreSQL server binaries not found (/usr/lib/postgresql/<version>/bin/{initdb,postgres}); the test ' +
        `suite runs against SQLite and PostgreSQL. Install them with: sudo ${script}\n` +
        '(or sudo apt-get install postgresql), or test SQLite only: TASKROUTER_TEST_DB=sqlite npm test',
    );
  }
  log(`server binaries not found; running ${script}`);
  execFileSync('bash', [script], { stdio: ['ignore', 2, 2] });
  if (findPostgresBinDir() === undefined) throw new Error(`${script} did not install the PostgreSQL server`);
}

/** Chromium for the dashboard's browser tests, installed like PostgreSQL when missing. */
function ensureChromiumInstalled(log: (msg: string) => void): void {
  if (findChromium() !== undefined) return;
  const script = path.join(findRepoRoot(__dirname), 'scripts', 'install-chromium.sh');
  if (process.getuid?.() !== 0) {
    throw new Error(
      `Chromium not found; the dashboard's browser tests need it. Install it with: sudo ${script}\n` +
        '(or sudo apt-get install chromium), or point TASKROUTER_CHROMIUM_PATH at a Chromium executable',
    );
  }
  log(`Chromium not found; running ${script}`);
  execFileSync('bash', [script], { stdio: ['ignore', 2, 2] });
  if (findChromium() === undefined) throw new Error(`${script} did not install Chromium`);
}

/** The dashboard UI's modules, compiled only when a source is newer than the last compilation. */
function ensureUiCompiled(): void {
  const root = findRepoRoot(__dirname);
  execFileSync(process.execPath, [path.join(root, 'scripts', 'build-ui.mjs'), '--if-needed'], {
    cwd: root,
    stdio: ['ignore', 2, 2],
  });
}

export default async function globalSetup(): Promise<void> {
  ensureUiCompiled();
  const log = (msg: string): void => void process.stderr.write(`[temporal] ${msg}\n`);
  const pgLog = (msg: string): void => void process.stderr.write(`[postgres] ${msg}\n`);
  const cliPath = await resolveTemporalCli({ install: true, log });
  if (postgresUnderTest()) ensurePostgresInstalled(pgLog);
  ensureChromiumInstalled((msg) => void process.stderr.write(`[chromium] ${msg}\n`));

  const startTemporal = async (): Promise<DevServer> => {
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
    return server;
  };
  const startPostgres = async (): Promise<PostgresDevServer | undefined> => {
    if (!postgresUnderTest()) return undefined;
    const started = Date.now();
    const pg = await startPostgresDev();
    pgLog(
      `cluster pid ${pg.pid} ready at ${pg.host}:${pg.port} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    return pg;
  };
  const [temporalResult, postgresResult] = await Promise.allSettled([startTemporal(), startPostgres()]);
  if (temporalResult.status === 'rejected' || postgresResult.status === 'rejected') {
    // Don't leave the other one running.
    if (temporalResult.status === 'fulfilled') await temporalResult.value.stop();
    if (postgresResult.status === 'fulfilled') await postgresResult.value?.stop();
    throw temporalResult.status === 'rejected'
      ? temporalResult.reason
      : (postgresResult as PromiseRejectedResult).reason;
  }
  const server = temporalResult.value;
  const postgres = postgresResult.value;

  const scratchDir = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-test-run-'));
  const infoFile = process.env['TEMPORAL_TEST_INFO'] || defaultTestInfoFile();
  writeFileSync(
    infoFile,
    JSON.stringify({
      address: server.address,
      namespace: server.namespace,
      pid: server.pid,
      ...(postgres && { postgresUrl: postgres.url, postgresPid: postgres.pid }),
    }),
  );
  process.env['TEMPORAL_TEST_ADDRESS'] = server.address;
  process.env['TEMPORAL_TEST_NAMESPACE'] = server.namespace;
  process.env['TEMPORAL_TEST_INFO'] = infoFile;
  process.env['TASKROUTER_TEST_SCRATCH'] = scratchDir;
  if (postgres) process.env['TASKROUTER_TEST_POSTGRES_URL'] = postgres.url;
  sharedServerSlot()[GLOBAL_KEY] = {
    pid: server.pid,
    infoFile,
    server,
    scratchDir,
    ...(postgres && { postgres }),
  };
}
