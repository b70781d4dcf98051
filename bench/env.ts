/**
 * What every benchmark shares: teardown of whatever it started (`onCleanup`, run in reverse by
 * `cleanup()` on success, failure or Ctrl+C), an in-memory Temporal dev server, a temp directory and the
 * settings every benchmark gateway needs (bench/processes.ts starts the gateway and upstreams).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { generateKey } from '../src/store/cipher';
import { resolveTemporalCli } from '../src/tooling/temporal-cli';
import type { DevServer } from '../src/tooling/temporal-dev-server';
import { stopProcessByPid } from '../src/tooling/processes';
import { startDevServer } from '../src/tooling/temporal-dev-server';
import { SEARCH_ATTRIBUTES } from '../src/workflows/search-attributes';

export const note = (msg: string): void => void process.stderr.write(`[bench] ${msg}\n`);

/** Everything started is pushed here and torn down in reverse order, once, whatever happens. */
const cleanups: Array<{ name: string; fn: () => Promise<void> }> = [];
let cleaning: Promise<void> | undefined;
export function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const { name, fn } of cleanups.reverse()) {
      try {
        await fn();
      } catch (err) {
        note(`cleanup of ${name} failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  })();
  return cleaning;
}

/** Registers a teardown step for `cleanup()` (run in reverse order of registration). */
export function onCleanup(name: string, fn: () => Promise<void>): void {
  cleanups.push({ name, fn });
}

/**
 * Runs a benchmark's `main` as the process: everything registered with `onCleanup` is torn down on
 * success, failure or Ctrl+C, and the exit code says which.
 */
export function runBench(main: () => Promise<void>): void {
  let exitCode = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    note(`${signal}: shutting down`);
    void cleanup().then(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  void main()
    .catch((err: unknown) => {
      exitCode = 1;
      process.stderr.write(
        `bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
    })
    .finally(async () => {
      await cleanup();
      process.exit(exitCode);
    });
}

/** What every benchmark gateway shares: loopback HTTP on a free port, its own task queue, a SQLite
 * store in `dir` and a fresh key. */
export function gatewayBasics(temporal: Pick<DevServer, 'address' | 'namespace'>, dir: string) {
  return {
    http: { host: '127.0.0.1', port: 0 },
    temporal: {
      address: temporal.address,
      namespace: temporal.namespace,
      taskQueue: `bench-${randomUUID()}`,
    },
    store: { sqliteFile: path.join(dir, 'taskrouter.db') },
    encryption: { activeKeyId: 'bench', keys: { bench: generateKey() } },
  };
}

/** An in-memory Temporal dev server (installing the CLI on first use), stopped by `cleanup()`. */
export async function startTemporal(): Promise<DevServer> {
  const cliPath = await resolveTemporalCli({ install: true, log: note });
  const temporal = await startDevServer({
    cliPath,
    namespace: 'taskrouter-bench',
    searchAttributes: SEARCH_ATTRIBUTES,
  });
  onCleanup('temporal dev server', async () => {
    await temporal.stop();
    await stopProcessByPid(temporal.pid);
  });
  note(`temporal dev server pid ${temporal.pid} at ${temporal.address}`);
  return temporal;
}

/** A temp directory for the gateway's SQLite store, removed by `cleanup()`. */
export function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-bench-'));
  onCleanup('temp dir', async () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
