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
import { createRetentionActivities } from '../activities/retention';
import { createApp } from '../api/app';
import { LegacyClients } from '../api/mcp/legacy/adapter';
import { InputRequestIds, ResumeTokens } from '../api/mcp/legacy/input-ids';
import { SessionTokens } from '../api/mcp/legacy/session';
import { Subscriptions } from '../api/mcp/subscriptions';
import { McpClientAnswerStore, McpSessionStore } from '../store/mcp-sessions';
import type { Config } from '../config/config';
import { McpGateway } from '../gateway/gateway';
import { UpstreamCatalog } from '../gateway/catalog';
import { ResultCache } from '../gateway/result-cache';
import { resolveEndpoint, resolveTaskEndpoint } from '../gateway/credentials';
import { checkNamespacing } from '../gateway/routing';
import type { Implementation } from '../protocol';
import { ApplicationFailure } from '@temporalio/activity';
import { Cipher } from '../store/cipher';
import { ControlPlaneStore } from '../store/control-plane';
import type { Principal } from '../store/control-plane/types';
import { ProtocolError } from '../protocol';
import { applyBootstrap, loadBootstrapFile } from './bootstrap';
import { openDatabase } from '../store/database';
import type { Database } from '../store/schema';
import { DashboardStore } from '../store/dashboard-store';
import { UpstreamSessionStore } from '../store/upstream-sessions';
import { PayloadStore } from '../store/payload-store';
import { TaskStore } from '../store/task-store';
import { createDataConverter } from '../temporal/codec';
import { TemporalTaskEngine } from '../temporal/task-engine';
import { installTemporalLogging } from '../temporal/runtime-logging';
import { startProjectDeletion } from '../temporal/project-deletion';
import { ensureRetentionSchedules, triggerRetention } from '../temporal/schedules';
import { createTaskWorker } from '../temporal/worker';
import { UpstreamClient } from '../upstream/client';
import { DiscoveryCache } from '../upstream/discovery';
import { SERVER_INFO } from './server-info';
import { probeChangedUpstreams, probeUpstream } from './upstream-probes';

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
  const db: Kysely<Database> = await openDatabase(config.store);
  const store = new TaskStore(db, cipher);
  const payloads = new PayloadStore(db, cipher);
  // A change that turns namespacing off over colliding upstreams is refused when it is made.
  const controlPlane: ControlPlaneStore = new ControlPlaneStore(db, cipher, {
    validateProject: (project) =>
      checkNamespacing(project, catalog, (u) => resolveEndpoint(controlPlane, ADMIN, project, u)),
  });
  // Sessions with 2025-era upstreams are shared by every process through the store (docs/interop.md).
  const upstream = new UpstreamClient({
    clientInfo: serverInfo,
    legacySessions: new UpstreamSessionStore(db, cipher),
    recordProbe: (upstreamId, probe) => controlPlane.recordUpstreamProbe(upstreamId, probe),
    onWarning: (message, detail) => logger.warn(detail, message),
  });
  const catalog = new UpstreamCatalog(upstream, serverInfo);
  const closers: Array<() => Promise<void>> = [];
  try {
    // The API role owns configuration: it applies the declarative parts, probes what is new or changed,
    // then checks every project, so a refused configuration stops the process before anything serves.
    if (opts.api) await applyConfiguration(config, controlPlane, catalog, upstream, logger);
  } catch (err) {
    await upstream.close();
    await db.destroy();
    throw err;
  }

  let worker: Worker | undefined;
  let workerRun: Promise<void> | undefined;
  if (opts.worker) {
    installTemporalLogging(logger.child({ component: 'temporal' }));
    const connection = await NativeConnection.connect({ address: config.temporal.address });
    // Project deletion stops task workflows through a client; connected on first use.
    let activityClient: Promise<{ client: Client; connection: Connection }> | undefined;
    const temporalClient = async () => {
      activityClient ??= Connection.connect({ address: config.temporal.address }).then((c) => ({
        connection: c,
        client: new Client({
          connection: c,
          namespace: config.temporal.namespace,
          dataConverter: createDataConverter(cipher),
        }),
      }));
      return (await activityClient).client;
    };
    const workerLogger = logger.child({ role: 'worker' });
    const activities = {
      ...createActivities({
        upstream,
        store,
        payloads,
        resolveUpstream: (access) => resolveTaskEndpoint(controlPlane, access).catch(denied),
        gatewayInfo: serverInfo,
        settings: { ...config.tasks, finishedTaskTtlMs: config.retention.payloadTtlMs },
        logger: workerLogger,
      }),
      ...createRetentionActivities({ store, controlPlane, temporalClient, logger: workerLogger }),
    };
    worker = await createTaskWorker({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      cipher,
      activities,
    });
    const w = worker;
    workerRun = w.run();
    closers.push(async () => {
      if (w.getState() === 'RUNNING') w.shutdown();
      await workerRun;
      await connection.close();
      if (activityClient) await (await activityClient).connection.close();
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
      controlPlane,
      upstream,
      discovery: new DiscoveryCache(upstream, () => ({})),
      catalog,
      cache: new ResultCache(),
      engine: new TemporalTaskEngine(client, config.temporal.taskQueue),
      store,
      payloads,
      serverInfo,
      logger: logger.child({ role: 'api' }),
      startTimeoutMs: config.tasks.startTimeoutMs,
    });
    const taskQueue = config.temporal.taskQueue;
    const startDeletion = (projectId: string) =>
      startProjectDeletion(client, taskQueue, projectId, config.retention.batchSize);
    try {
      await ensureRetentionSchedules(client, taskQueue, config.retention);
      // Deletions interrupted between marking the project and starting the workflow resume here.
      for (const projectId of await controlPlane.projectsBeingDeleted()) await startDeletion(projectId);
    } catch (err) {
      // Serving does not depend on them; the next start-up tries again (docs/retention.md).
      logger.error({ err }, 'retention schedules or pending project deletions could not be set up');
    }
    const subscriptions = new Subscriptions({ gateway, store, logger });
    const legacy = new LegacyClients({
      gateway,
      tokens: new SessionTokens(cipher, config.http.mcpSessionTtlMs),
      sessions: new McpSessionStore(db),
      inputIds: new InputRequestIds(cipher),
      resume: new ResumeTokens(cipher),
      answers: new McpClientAnswerStore(db, cipher, 15 * 60_000),
      serverInfo,
    });
    const app = createApp({
      gateway,
      controlPlane,
      ...(config.admin.token !== undefined && { adminToken: config.admin.token }),
      logger,
      maxBodyBytes: config.http.maxBodyBytes,
      maxJsonDepth: config.http.maxJsonDepth,
      origin: {
        listenHost: config.http.host,
        allowedOrigins: config.http.allowedOrigins,
        allowedHosts: config.http.allowedHosts,
      },
      subscriptions,
      legacy,
      admin: {
        runRetention: (kind) => triggerRetention(client, taskQueue, kind),
        startProjectDeletion: startDeletion,
        probeUpstream: (project, alias) => probeUpstream(controlPlane, upstream, project, alias),
      },
      dashboard: {
        dashboard: new DashboardStore(db),
        store,
        payloads,
        ...(config.temporal.uiUrl !== undefined && {
          temporalUi: { url: config.temporal.uiUrl, namespace: config.temporal.namespace },
        }),
      },
      trustProxy: config.http.trustProxy,
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

const ADMIN: Principal = { kind: 'admin', via: 'bootstrap' };

/**
 * Projects declared in the configuration file belong to a team named `config`; they and the optional
 * bootstrap file are applied idempotently. Then every project with namespacing off is checked for name
 * collisions among its upstreams (those reachable with a project or no credential).
 */
async function applyConfiguration(
  config: Config,
  controlPlane: ControlPlaneStore,
  catalog: UpstreamCatalog,
  upstream: UpstreamClient,
  logger: Logger,
): Promise<void> {
  if (config.projects.length > 0) {
    await applyBootstrap(controlPlane, {
      teams: [{ slug: 'config', name: 'Projects from the configuration file' }],
      projects: config.projects.map((p) => ({ ...p, team: 'config' })),
    });
  }
  if (config.bootstrapFile) await applyBootstrap(controlPlane, loadBootstrapFile(config.bootstrapFile));
  await probeChangedUpstreams(controlPlane, upstream, logger);
  for (const view of await controlPlane.listProjects(ADMIN)) {
    const project = await controlPlane.projectBySlug(view.slug);
    if (!project) continue;
    await checkNamespacing(
      project,
      catalog,
      (u) => resolveEndpoint(controlPlane, ADMIN, project, u),
      (alias) =>
        logger.warn({ project: project.slug, upstream: alias }, 'upstream not checked for name collisions'),
    );
  }
}

/** A task whose credential is gone fails its upstream calls at once instead of retrying. */
function denied(err: unknown): never {
  if (err instanceof ProtocolError) {
    throw ApplicationFailure.create({
      message: err.message,
      type: 'UpstreamAccessDenied',
      nonRetryable: true,
    });
  }
  throw err;
}
