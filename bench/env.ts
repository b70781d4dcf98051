/**
 * The benchmark's own environment: an in-memory Temporal dev server, three example upstreams (one for
 * the load, one per history task so each task's upstream poll count is exact) and the gateway with API
 * and worker roles on a temp SQLite store. `cleanup()` tears down whatever was started, in reverse.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import pino from 'pino';
import { Agent } from 'undici';
import type { ExampleUpstream } from '../examples/upstream/server';
import { startExampleUpstream } from '../examples/upstream/server';
import type { Config } from '../src/config/config';
import { parseConfig } from '../src/config/config';
import type { Runtime } from '../src/main/runtime';
import { startRuntime } from '../src/main/runtime';
import { Cipher, generateKey } from '../src/store/cipher';
import { resolveTemporalCli } from '../src/tooling/temporal-cli';
import { createDataConverter } from '../src/temporal/codec';
import type { DevServer } from '../src/tooling/temporal-dev-server';
import { stopProcessByPid } from '../src/tooling/processes';
import { startDevServer } from '../src/tooling/temporal-dev-server';
import { SEARCH_ATTRIBUTES } from '../src/workflows/search-attributes';
import { CountingLogSink, McpHttpClient } from './support';

export interface EnvOptions {
  /** pollIntervalMs the example upstreams suggest. */
  poll: number;
}

export const note = (msg: string): void => void process.stderr.write(`[bench] ${msg}\n`);

// ---------------------------------------------------------------------------------------------------
// Environment

export interface Env {
  temporal: DevServer;
  upstreams: { main: ExampleUpstream; short: ExampleUpstream; long: ExampleUpstream };
  runtime: Runtime;
  config: Config;
  client: Client;
  gateway: McpHttpClient;
  direct: McpHttpClient;
  shortGateway: McpHttpClient;
  longGateway: McpHttpClient;
  logSink: CountingLogSink;
}

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

export async function startEnv(opts: EnvOptions): Promise<Env> {
  const temporal = await startTemporal();
  const dir = tempDir();

  const startUpstream = async (name: string) => {
    const u = await startExampleUpstream({ pollIntervalMs: opts.poll, name });
    cleanups.push({ name, fn: () => u.close() });
    return u;
  };
  const upstreams = {
    main: await startUpstream('bench-upstream'),
    short: await startUpstream('bench-upstream-short'),
    long: await startUpstream('bench-upstream-long'),
  };

  const config = parseConfig({
    ...gatewayBasics(temporal, dir),
    tasks: {
      // At or below the upstream's suggestion, so the gateway polls at exactly the suggested interval.
      minPollIntervalMs: Math.max(1, Math.min(50, opts.poll)),
      maxPollIntervalMs: Math.max(60_000, opts.poll),
      maxWatchMs: 5 * 60_000,
      pollFailureBudget: 30,
      startTimeoutMs: 60_000,
    },
    projects: [
      {
        slug: 'bench',
        authMode: 'anonymous',
        namespacing: false,
        upstreams: [{ alias: 'example', url: upstreams.main.url }],
      },
      {
        slug: 'hist-short',
        authMode: 'anonymous',
        namespacing: false,
        upstreams: [{ alias: 'example', url: upstreams.short.url }],
      },
      {
        slug: 'hist-long',
        authMode: 'anonymous',
        namespacing: false,
        upstreams: [{ alias: 'example', url: upstreams.long.url }],
      },
    ],
  });
  const logSink = new CountingLogSink();
  const logger = pino({ level: process.env['BENCH_LOG_LEVEL'] ?? 'warn' }, logSink);
  const runtime = await startRuntime({ config, logger, api: true, worker: true });
  cleanups.push({ name: 'gateway runtime', fn: () => runtime.close() });
  if (runtime.url === undefined) throw new Error('gateway API did not start');

  const connection = await Connection.connect({ address: temporal.address });
  cleanups.push({ name: 'temporal client', fn: () => connection.close() });
  const client = new Client({
    connection,
    namespace: temporal.namespace,
    dataConverter: createDataConverter(new Cipher(config.encryption)),
  });

  // One dispatcher, no per-origin connection cap: N calls really are N concurrent requests on both sides.
  const agent = new Agent({ keepAliveTimeout: 30_000, headersTimeout: 120_000, bodyTimeout: 120_000 });
  cleanups.push({ name: 'http agent', fn: () => agent.close() });
  const mcp = (url: string) => new McpHttpClient(url, agent);
  return {
    temporal,
    upstreams,
    runtime,
    config,
    client,
    gateway: mcp(`${runtime.url}/v1/mcp/bench`),
    direct: mcp(upstreams.main.url),
    shortGateway: mcp(`${runtime.url}/v1/mcp/hist-short`),
    longGateway: mcp(`${runtime.url}/v1/mcp/hist-long`),
    logSink,
  };
}
