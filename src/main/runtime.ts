/**
 * Wires the gateway from configuration: store, Temporal client and/or worker, upstream client, HTTP
 * app. `npm start`, the separate api/worker processes and the integration tests all use this.
 *
 * Each role's modules are loaded only when the role runs (api-role.ts, worker-role.ts), so an API
 * process never loads the Temporal worker and its native library (docs/performance.md).
 */
import type { WatchHub } from '../temporal/watch-hub';
import { OAuthClientStore } from '../store/control-plane/oauth-clients';
import { upstreamRenewal, upstreamRevocation, upstreamTokenExchange } from './upstream-renewal';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config/config';
import { stdioAddressCheck } from '../config/stdio';
import { UpstreamCatalog } from '../gateway/catalog';
import { resolveEndpoint } from '../store/control-plane/endpoints';
import { checkNamespacing } from '../gateway/name-owners';
import type { Implementation } from '../protocol';
import { Cipher } from '../store/cipher';
import { ControlPlaneStore } from '../store/control-plane';
import { openDatabase } from '../store/database';
import { UpstreamSessionStore } from '../store/sessions/upstream-sessions';
import { PayloadStore } from '../store/tasks/payload-store';
import { TaskStore } from '../store/tasks/task-store';
import { Agent } from 'undici';
import { AddressPolicy } from '../upstream/address-policy';
import { UpstreamClient } from '../upstream/client';
import { startHealthPort } from './health-port';
import type { Role, Shared } from './roles';
import { ADMIN, Phases } from './roles';
import { SERVER_INFO } from './server-info';

export interface RuntimeOptions {
  config: Config;
  logger: Logger;
  /** Which roles this process plays. */
  api: boolean;
  worker: boolean;
  /** Create the Temporal namespace and search attributes when missing (a cluster rather than the dev server). */
  ensureNamespace?: boolean;
  /**
   * How often the control-plane cache looks for changes made elsewhere (default 250 ms). Tests set it
   * long to prove that what a listen stream is told does not wait for that check.
   */
  changeCheckEveryMs?: number;
}

export interface Runtime {
  /** Base URL of the HTTP server when the API role runs. */
  url?: string;
  store: TaskStore;
  /** The worker role's watch hub, when the worker role runs (tests stop it as a dead worker would). */
  watchHub?: WatchHub;
  /** How long each start-up step took, in milliseconds (steps of two roles may overlap). */
  startup: Record<string, number>;
  /**
   * Stops everything. `graceful` (SIGTERM): the HTTP server stops accepting and running requests get
   * `config.shutdownGraceMs` to finish; then the worker stops polling and running activities get as long.
   * Without it, open connections are cut at once.
   */
  close(opts?: { graceful?: boolean }): Promise<void>;
}

export async function startRuntime(opts: RuntimeOptions): Promise<Runtime> {
  const { config, logger } = opts;
  const phases = new Phases();
  const serverInfo: Implementation = SERVER_INFO;
  const cipher = new Cipher(config.encryption);
  const db = await phases.time('database', () => openDatabase(config.store));
  // Where upstreams a project manager set may connect (docs/admin.md, "Upstream addresses"); the OAuth
  // requests made for them (their authorization servers' URLs come from the upstream) go through it too.
  const addressPolicy = new AddressPolicy({ allow: config.upstreams.networks.allow });
  const checkedVia = new Agent({ connect: addressPolicy.connector() });
  // A change that turns namespacing off over colliding upstreams is refused when it is made.
  const controlPlane: ControlPlaneStore = new ControlPlaneStore(db, cipher, {
    ...(opts.changeCheckEveryMs !== undefined && { changeCheckEveryMs: opts.changeCheckEveryMs }),
    answerLimitCeilings: config.upstreams,
    validateProject: (project) =>
      checkNamespacing(project, catalog, (u) => resolveEndpoint(controlPlane, ADMIN, project, u)),
    // Users connect upstreams with OAuth under the public origin (the redirect URI's); the upstreams that
    // say so (`auth.oauth`), or every `per_user` one with the legacy `connectUpstreams`.
    ...(config.http.publicBaseUrl !== undefined && {
      connectBaseUrl: config.http.publicBaseUrl,
      connectAllPerUser: config.connectUpstreams,
      renewAuthorization: upstreamRenewal(new OAuthClientStore(db, cipher), logger, checkedVia),
      revokeAtServer: upstreamRevocation(new OAuthClientStore(db, cipher), logger, checkedVia),
    }),
    checkUpstreamAddress: (url) => addressPolicy.checkUrl(url),
    // A stdio upstream names an entry of the operator's catalog with only the values it declares.
    checkStdioAddress: stdioAddressCheck(config.stdio.catalog),
    // RFC 8693 for `per_user` upstreams with `auth.tokenExchange` (docs/oauth.md); no public origin needed.
    exchangeToken: upstreamTokenExchange(logger, checkedVia),
  });
  // Sessions with 2025-era upstreams are shared by every process through the store (docs/interop.md).
  const upstream = new UpstreamClient({
    clientInfo: serverInfo,
    pools: {
      connections: config.upstreams.poolConnections,
      idleMs: config.upstreams.poolIdleMs,
      maxPools: config.upstreams.maxPools,
    },
    legacySessions: new UpstreamSessionStore(db, cipher),
    recordProbe: (upstreamId, probe) => controlPlane.recordUpstreamProbe(upstreamId, probe),
    onWarning: (message, detail) => logger.warn(detail, message),
    answerLimits: config.upstreams,
    // Large answers are parsed (and tools/call results cut) on worker threads running this script.
    answerThreadScript: require.resolve('../gateway/responses/answer-thread'),
    addressPolicy,
    stdio: { config: config.stdio, log: (detail, message) => logger.info(detail, message) },
  });
  const catalog = new UpstreamCatalog(upstream, serverInfo);
  const shared: Shared = {
    config,
    logger,
    serverInfo,
    cipher,
    upstream,
    catalog,
    db,
    store: new TaskStore(db, cipher, { retention: config.retention }),
    payloads: new PayloadStore(db, cipher),
    controlPlane,
    addressPolicy,
    checkedVia,
    ensureNamespace: opts.ensureNamespace ?? false,
    phases,
    readiness: {
      store: async () => {
        await sql`select 1`.execute(db);
      },
    },
    degraded: {},
  };
  const release = async () => {
    await upstream.close();
    await checkedVia.close();
    await db.destroy();
  };

  let started: { api?: Role & { url: string }; worker?: Role };
  try {
    started = await startRoles(shared, opts);
  } catch (err) {
    await release();
    throw err;
  }
  const { api, worker } = started;
  // The internal health port, after the roles have registered their readiness checks.
  let healthPort: Awaited<ReturnType<typeof startHealthPort>> | undefined;
  try {
    if (config.health.port !== undefined) healthPort = await startHealthPort(shared, config.health.port);
  } catch (err) {
    await api?.close(0);
    await worker?.close(0);
    await release();
    throw err;
  }
  return {
    ...(api && { url: api.url }),
    store: shared.store,
    ...(worker?.watchHub && { watchHub: worker.watchHub }),
    startup: phases.summary(),
    async close(closeOpts) {
      const graceMs = closeOpts?.graceful ? config.shutdownGraceMs : 0;
      await healthPort?.close(0);
      // The API first: its running requests may be waiting on this process's worker.
      await api?.close(graceMs);
      await worker?.close(graceMs);
      await release();
    },
  };
}

/**
 * The API role owns configuration: it applies the declarative parts, then checks every project, so a
 * refused configuration stops the process before anything serves. Then both roles start side by side.
 */
async function startRoles(
  shared: Shared,
  opts: RuntimeOptions,
): Promise<{ api?: Role & { url: string }; worker?: Role }> {
  const { phases } = shared;
  const apiModule = opts.api ? await phases.time('api: load', () => import('./api-role')) : undefined;
  if (apiModule) {
    await phases.time('api: configuration', () =>
      apiModule.applyConfiguration(
        shared.config,
        shared.controlPlane,
        shared.catalog,
        shared.upstream,
        shared.logger,
      ),
    );
  }
  const starting = [
    opts.worker
      ? phases.time('worker: load', () => import('./worker-role')).then((m) => m.startWorkerRole(shared))
      : undefined,
    apiModule?.startApiRole(shared),
  ] as const;
  const [worker, api] = await Promise.allSettled(starting);
  const failed = [worker, api].find((r) => r.status === 'rejected');
  if (failed) {
    // The other role may have started: stop it before reporting the failure.
    for (const r of [api, worker]) if (r.status === 'fulfilled') await r.value?.close(0);
    throw failed.reason;
  }
  return {
    ...(api.status === 'fulfilled' && api.value && { api: api.value }),
    ...(worker.status === 'fulfilled' && worker.value && { worker: worker.value }),
  };
}
