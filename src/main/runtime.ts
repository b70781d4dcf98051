/**
 * Wires the gateway from configuration: store, Temporal client and/or worker, upstream client, HTTP
 * app. `npm start`, the separate api/worker processes and the integration tests all use this.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Worker } from '@temporalio/worker';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { createActivities } from '../activities';
import { createApp } from '../api/app';
import { Subscriptions } from '../api/subscriptions';
import type { Config } from '../config/config';
import { McpGateway } from '../gateway/gateway';
import { UpstreamCatalog } from '../gateway/catalog';
import { staticProjectRegistry } from '../gateway/projects';
import { ResultCache } from '../gateway/result-cache';
import { checkNamespacing } from '../gateway/routing';
import type { Implementation } from '../protocol';
import { Cipher } from '../store/cipher';
import { openDatabase } from '../store/database';
import type { Database } from '../store/schema';
import { TaskStore } from '../store/task-store';
import { createDataConverter } from '../temporal/codec';
import { TemporalTaskEngine } from '../temporal/task-engine';
import { installTemporalLogging } from '../temporal/runtime-logging';
import { createTaskWorker } from '../temporal/worker';
import { UpstreamClient } from '../upstream/client';
import { DiscoveryCache } from '../upstream/discovery';
import { SERVER_INFO } from './server-info';

export interface RuntimeOptions {
  config: Config;
  logger: Logger;
  /** Which roles this process plays. */
  api: boolean;
  worker: boolean;
}

export interface Runtime {
  /** Base URL of the HTTP server when the API role runs. */
  url?: string;
  store: TaskStore;
  close(): Promise<void>;
}

export async function startRuntime(opts: RuntimeOptions): Promise<Runtime> {
  const { config, logger } = opts;
  const serverInfo: Implementation = SERVER_INFO;
  const cipher = new Cipher(config.encryption);
  const upstream = new UpstreamClient();
  const projects = staticProjectRegistry(config.projects);
  const catalog = new UpstreamCatalog(upstream, serverInfo);
  // Configuration is checked before anything starts, so a refused project leaves nothing running.
  try {
    for (const project of config.projects) {
      await checkNamespacing(project, catalog, (alias) =>
        logger.warn(
          { project: project.slug, upstream: alias },
          'upstream unreachable; name collisions not checked',
        ),
      );
    }
  } catch (err) {
    await upstream.close();
    throw err;
  }
  const db: Kysely<Database> = await openDatabase(config.store);
  const store = new TaskStore(db, cipher);
  const closers: Array<() => Promise<void>> = [];

  let worker: Worker | undefined;
  let workerRun: Promise<void> | undefined;
  if (opts.worker) {
    installTemporalLogging(logger.child({ component: 'temporal' }));
    const connection = await NativeConnection.connect({ address: config.temporal.address });
    worker = await createTaskWorker({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      cipher,
      activities: createActivities({
        upstream,
        store,
        resolveUpstream: (p, a) => projects.endpoint(p, a),
        gatewayInfo: serverInfo,
        settings: config.tasks,
        logger: logger.child({ role: 'worker' }),
      }),
    });
    const w = worker;
    workerRun = w.run();
    closers.push(async () => {
      if (w.getState() === 'RUNNING') w.shutdown();
      await workerRun;
      await connection.close();
    });
  }

  let url: string | undefined;
  if (opts.api) {
    const connection = await Connection.connect({ address: config.temporal.address });
    const client = new Client({
      connection,
      namespace: config.temporal.namespace,
      dataConverter: createDataConverter(cipher),
    });
    const gateway = new McpGateway({
      projects,
      upstream,
      discovery: new DiscoveryCache(upstream, () => ({})),
      catalog,
      cache: new ResultCache(),
      engine: new TemporalTaskEngine(client, config.temporal.taskQueue),
      store,
      serverInfo,
      logger: logger.child({ role: 'api' }),
      startTimeoutMs: config.tasks.startTimeoutMs,
    });
    const subscriptions = new Subscriptions();
    const app = createApp({
      gateway,
      projects,
      logger,
      maxBodyBytes: config.http.maxBodyBytes,
      origin: {
        listenHost: config.http.host,
        allowedOrigins: config.http.allowedOrigins,
        allowedHosts: config.http.allowedHosts,
      },
      subscriptions,
    });
    const s = createServer(app);
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(config.http.port, config.http.host, () => resolve());
    });
    const addr = s.address() as AddressInfo;
    url = `http://${config.http.host}:${addr.port}`;
    closers.unshift(async () => {
      subscriptions.closeAll();
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
      await connection.close();
    });
  }

  return {
    ...(url !== undefined && { url }),
    store,
    async close() {
      for (const close of closers) await close();
      await upstream.close();
      await db.destroy();
    },
  };
}
