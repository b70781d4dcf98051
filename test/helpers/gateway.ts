/**
 * Starts the real gateway for a test file: the example upstream over HTTP, a store on the database under
 * test (testStoreConfig(): a SQLite file in a temp directory or a fresh PostgreSQL database), and the API
 * and worker roles against the shared Temporal dev server, on their own task queue.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import pino from 'pino';
import type { ExampleUpstream, ExampleUpstreamOptions } from '../../examples/upstream/server';
import { startExampleUpstream } from '../../examples/upstream/server';
import type { Config, ConfigInput } from '../../src/config/config';
import { parseConfig } from '../../src/config/config';
import type { Runtime } from '../../src/main/runtime';
import { startRuntime } from '../../src/main/runtime';
import { Cipher, generateKey } from '../../src/store/cipher';
import { createDataConverter } from '../../src/temporal/codec';
import { McpTestClient } from './mcp-client';
import { testStoreConfig } from './store';
import { testTemporal } from './temporal';

export interface TestGateway {
  config: Config;
  upstream: ExampleUpstream;
  client: McpTestClient;
  /** Starts (or restarts) the API and worker roles with the same store, keys and task queue. */
  start(roles?: { api?: boolean; worker?: boolean }): Promise<void>;
  stop(): Promise<void>;
  runtime(): Runtime;
  /** A client for another project of this gateway. */
  clientFor(slug: string): McpTestClient;
  /** A Temporal client with the gateway's data converter, for inspecting task workflows. */
  temporalClient(): Promise<Client>;
  close(): Promise<void>;
}

export async function startTestGateway(
  opts: {
    upstream?: ExampleUpstreamOptions;
    config?: Partial<ConfigInput>;
    /** Extra projects on the same upstream, next to `demo` (namespacing off). */
    projects?: (upstreamUrl: string) => Array<Record<string, unknown>>;
    /** The bootstrap document (users, teams, projects) for the upstream's URL; written to the test's own folder. */
    bootstrap?: (upstreamUrl: string) => unknown;
    /** Receives every log line (JSON) at debug level, e.g. to prove what logs never contain. */
    logSink?: (line: string) => void;
    /** `temporal.uiUrl`: the dashboard links task workflows there. */
    temporalUiUrl?: string;
    /** More of the `temporal` section (e.g. `maxConcurrentActivities`), next to the test's server and queue. */
    temporal?: Record<string, unknown>;
  } = {},
): Promise<TestGateway> {
  const temporal = testTemporal();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-test-'));
  const upstream = await startExampleUpstream({ pollIntervalMs: 100, ...opts.upstream });
  const config = parseConfig({
    http: { host: '127.0.0.1', port: 0 },
    temporal: {
      address: temporal.address,
      namespace: temporal.namespace,
      taskQueue: `tq-${randomUUID()}`,
      ...(opts.temporalUiUrl !== undefined && { uiUrl: opts.temporalUiUrl }),
      ...opts.temporal,
    },
    store: await testStoreConfig(dir),
    encryption: { activeKeyId: 'k1', keys: { k1: generateKey() } },
    tasks: { minPollIntervalMs: 50, maxPollIntervalMs: 2000, maxWatchMs: 60_000, pollFailureBudget: 5 },
    // Projects here allow anonymous callers unless they say otherwise; test/integration/access.test.ts
    // covers authenticated callers.
    projects: [
      { slug: 'demo', namespacing: false, upstreams: [{ alias: 'example', url: upstream.url }] },
      ...(opts.projects?.(upstream.url) ?? []),
    ].map((p) => ({ authMode: 'anonymous', ...p })) as never[],
    ...(opts.bootstrap && { bootstrapFile: writeBootstrap(dir, opts.bootstrap(upstream.url)) }),
    ...opts.config,
  });
  const logger = opts.logSink
    ? pino({ level: 'debug' }, { write: opts.logSink })
    : pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' });
  let runtimes: Runtime[] = [];
  const connections: Connection[] = [];
  let port = config.http.port;
  const client = new McpTestClient('');

  const gw: TestGateway = {
    config,
    upstream,
    client,
    async start(roles = {}) {
      const api = roles.api ?? true;
      const worker = roles.worker ?? true;
      // Keep the same port across restarts so clients keep their URL.
      const rt = await startRuntime({
        config: { ...config, http: { ...config.http, port } },
        logger,
        api,
        worker,
      });
      if (rt.url) {
        port = Number(new URL(rt.url).port);
        (client as { url: string }).url = `${rt.url}/v1/mcp/demo`;
      }
      runtimes.push(rt);
    },
    async stop() {
      for (const rt of runtimes) await rt.close();
      runtimes = [];
    },
    clientFor(slug: string) {
      return new McpTestClient(client.url.replace(/\/v1\/mcp\/[^/]+$/, `/v1/mcp/${slug}`));
    },
    runtime() {
      const rt = runtimes[0];
      if (!rt) throw new Error('gateway not started');
      return rt;
    },
    async temporalClient() {
      const connection = await Connection.connect({ address: temporal.address });
      connections.push(connection);
      return new Client({
        connection,
        namespace: temporal.namespace,
        dataConverter: createDataConverter(new Cipher(config.encryption)),
      });
    },
    async close() {
      for (const c of connections) await c.close();
      await gw.stop();
      await upstream.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await gw.start();
  return gw;
}

function writeBootstrap(dir: string, doc: unknown): string {
  const file = path.join(dir, 'bootstrap.json');
  writeFileSync(file, JSON.stringify(doc));
  return file;
}

/**
 * Another API replica of `gw` (same store, keys and Temporal; no worker), on a port of its own: where a
 * test needs two replicas, e.g. a stream on one and a change or a task on the other.
 */
export function startApiReplica(gw: Pick<TestGateway, 'config'>, opts: { changeCheckEveryMs?: number } = {}) {
  return startRuntime({
    config: { ...gw.config, http: { ...gw.config.http, port: 0 } },
    logger: pino({ level: 'silent' }),
    api: true,
    worker: false,
    ...opts,
  });
}

/** Bootstrap users, one per handle, each with the one personal access token given (named `t`). */
export function tokenUsers(tokens: Record<string, string>) {
  return Object.entries(tokens).map(([handle, token]) => ({ handle, tokens: [{ name: 't', token }] }));
}
