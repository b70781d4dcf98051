/**
 * The API role: the configuration check, the Temporal client and the HTTP app. Loaded only by processes
 * that serve the API; it never loads the Temporal worker (worker-role.ts).
 */
import { ApprovalDesk } from '../gateway/tasks/approval-desk';
import { ApprovalStore } from '../store/tasks/approvals';
import { Client, Connection } from '@temporalio/client';
import type { Logger } from 'pino';
import { createApp } from '../api/app';
import { LegacyClients } from '../api/mcp/legacy/adapter';
import { InputRequestIds, ResumeTokens } from '../api/mcp/legacy/input-ids';
import { SessionTokens } from '../api/mcp/legacy/session';
import { ListFeed } from '../api/mcp/list-feed';
import { ResourceRelay } from '../api/mcp/resource-relay';
import { Subscriptions } from '../api/mcp/subscriptions';
import { upstreamConnect } from '../api/dashboard/connect';
import { dashboardSso } from '../api/dashboard/sso';
import { OAuthResourceServer } from '../api/oauth/resource-server';
import type { Config } from '../config/config';
import type { UpstreamCatalog } from '../gateway/catalog';
import { resolveEndpoint } from '../store/control-plane/endpoints';
import { FairShares } from '../gateway/fair-share';
import { McpGateway } from '../gateway/gateway';
import { ResultCache } from '../gateway/responses/result-cache';
import { checkNamespacing } from '../gateway/name-owners';
import type { ControlPlaneStore } from '../store/control-plane';
import { DashboardStore } from '../store/sessions/dashboard-store';
import { OAuthClientStore } from '../store/control-plane/oauth-clients';
import { FirstCalls } from '../store/tasks/first-calls';
import { McpClientAnswerStore, McpSessionStore } from '../store/sessions/mcp-sessions';
import { UpstreamEvents } from '../store/sessions/upstream-events';
import { createDataConverter } from '../temporal/codec';
import { ensureNamespaceAndSearchAttributes } from '../temporal/namespace';
import { startProjectDeletion } from '../temporal/project-deletion';
import { ensureRetentionSchedules, triggerRetention } from '../temporal/schedules';
import { DirectFirstCall } from '../temporal/first-call';
import { TemporalTaskEngine } from '../temporal/task-engine';
import { clientTracing } from '../temporal/tracing';
import { DiscoveryCache } from '../upstream/discovery';
import { SEARCH_ATTRIBUTES } from '../workflows/search-attributes';
import { temporalMetricsText } from '../telemetry/temporal-metrics';
import { applyBootstrap, loadBootstrapFile } from './bootstrap';
import { listen } from './http-server';
import type { Role, Shared } from './roles';
import { ADMIN } from './roles';
import { clientMetadataDocumentUrl } from '../config/connect';
import { probeChangedUpstreams, probeUpstream } from './upstream-probes';
import type { UpstreamClient } from '../upstream/client';

export async function startApiRole(shared: Shared): Promise<Role & { url: string }> {
  const { config, logger, cipher, upstream, catalog, db, store, payloads, controlPlane, serverInfo } = shared;
  const connection = await shared.phases.time('api: temporal connection', async () => {
    const c = await Connection.connect({ address: config.temporal.address });
    if (shared.ensureNamespace)
      await ensureNamespaceAndSearchAttributes(c, config.temporal.namespace, SEARCH_ATTRIBUTES);
    return c;
  });
  shared.readiness['temporal'] = async () => {
    await connection.workflowService.getSystemInfo({});
  };
  const interceptors = await clientTracing();
  const client = new Client({
    connection,
    namespace: config.temporal.namespace,
    dataConverter: createDataConverter(cipher),
    ...(interceptors && { interceptors }),
  });
  const engine = new TemporalTaskEngine(client, config.temporal.taskQueue);
  const approvals = new ApprovalDesk({ approvals: new ApprovalStore(db), controlPlane, engine, payloads });
  const firstCalls = new FirstCalls(db, undefined, config.tasks.firstCallLostAfterMs);
  // docs/decisions.md, "The first call from the API"; `worker`: the earlier path (update-with-start).
  const firstCall =
    config.tasks.firstCallFrom === 'api'
      ? new DirectFirstCall({
          upstream,
          store,
          payloads,
          firstCalls,
          engine,
          gatewayInfo: serverInfo,
          logger: logger.child({ role: 'api' }),
          bounds: { ...config.tasks, maxStatusMessageChars: config.streams.maxStatusMessageChars },
          startTimeoutMs: config.tasks.startTimeoutMs,
          adoptableEnlistment: config.tasks.hub.adoptApiEnlistment,
        })
      : undefined;
  const gateway = new McpGateway({
    controlPlane,
    upstream,
    discovery: new DiscoveryCache(upstream, () => ({})),
    catalog,
    cache: new ResultCache(),
    engine,
    store,
    payloads,
    firstCalls,
    ...(firstCall && { firstCall }),
    serverInfo,
    logger: logger.child({ role: 'api' }),
    startTimeoutMs: config.tasks.startTimeoutMs,
    ...(config.tasks.watchBy === 'hub' && { watchByHub: { maxWatchMs: config.tasks.hub.reenlistAfterMs } }),
    digest: (purpose, text) => cipher.digest(purpose, text),
    // The arguments are purged with payload retention: an approval expires a little before.
    approvalWaitLimitMs: Math.max(
      1000,
      config.retention.payloadTtlMs - Math.min(300_000, Math.floor(config.retention.payloadTtlMs / 10)),
    ),
    shares: new FairShares(config.fairShare),
  });
  const taskQueue = config.temporal.taskQueue;
  const startDeletion = (projectId: string) =>
    startProjectDeletion(client, taskQueue, projectId, config.retention.batchSize);
  const lists = new ListFeed({
    gateway,
    events: new UpstreamEvents(db),
    upstream,
    serverInfo,
    logger: logger.child({ role: 'api' }),
    forgetServed: () => controlPlane.forgetServed(),
  });
  const resources = new ResourceRelay({
    gateway,
    upstream,
    serverInfo,
    logger: logger.child({ role: 'api' }),
  });
  const subscriptions = new Subscriptions({
    gateway,
    store,
    lists,
    resources,
    logger,
    maxPerCaller: config.streams.maxPerCaller,
    maxPerProject: config.streams.maxPerProject,
  });
  const legacy = new LegacyClients({
    gateway,
    tokens: new SessionTokens(cipher, config.http.mcpSessionTtlMs),
    sessions: new McpSessionStore(db),
    inputIds: new InputRequestIds(cipher),
    resume: new ResumeTokens(cipher),
    answers: new McpClientAnswerStore(db, cipher, 15 * 60_000),
    serverInfo,
  });
  // The configuration schema requires http.publicBaseUrl with oauth.
  const oauth =
    config.oauth &&
    config.http.publicBaseUrl !== undefined &&
    new OAuthResourceServer(config.oauth, controlPlane, config.http.publicBaseUrl);
  const dashboardStore = new DashboardStore(db);
  const sso =
    oauth && config.oauth?.dashboard && config.http.publicBaseUrl !== undefined
      ? dashboardSso({
          config: config.oauth.dashboard,
          publicBaseUrl: config.http.publicBaseUrl,
          oauth,
          identities: controlPlane,
          dashboard: dashboardStore,
          cipher,
          logger,
        })
      : undefined;
  // The gateway's client metadata document, where it can be published (https; config/connect.ts).
  const document = clientMetadataDocumentUrl(config.http.publicBaseUrl, config.connect);
  const connect =
    config.http.publicBaseUrl !== undefined
      ? upstreamConnect({
          publicBaseUrl: config.http.publicBaseUrl,
          connectAllPerUser: config.connectUpstreams,
          clientName: config.connect.clientName,
          ...(document !== undefined && { clientMetadataDocumentUrl: document }),
          controlPlane,
          dashboard: dashboardStore,
          clients: new OAuthClientStore(db, cipher),
          cipher,
          logger,
          checkedVia: shared.checkedVia,
        })
      : undefined;
  const app = createApp({
    gateway,
    controlPlane,
    ...(oauth ? { oauth } : {}),
    ...(sso && { dashboardSso: sso }),
    ...(connect && { upstreamConnect: connect }),
    ...(config.admin.token !== undefined && { adminToken: config.admin.token }),
    logger,
    maxBodyBytes: config.http.maxBodyBytes,
    jsonShape: {
      maxDepth: config.http.maxJsonDepth,
      maxMembers: config.http.maxJsonMembers,
      maxKeys: config.http.maxJsonKeys,
      maxContainers: config.http.maxJsonContainers,
    },
    streams: config.streams,
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
      knownTools: (upstreamId) => catalog.knownToolNames(upstreamId),
      approvals,
    },
    dashboard: {
      dashboard: dashboardStore,
      approvals,
      ...(connect !== undefined && { connectUpstreams: { allPerUser: config.connectUpstreams } }),
      store,
      payloads,
      ...(config.temporal.uiUrl !== undefined && {
        temporalUi: { url: config.temporal.uiUrl, namespace: config.temporal.namespace },
      }),
    },
    trustProxy: config.http.trustProxy,
    health: {
      checks: shared.readiness,
      degraded: shared.degraded,
      extraMetrics: temporalMetricsText,
      // The public port serves /metrics only to the token's bearer, or when the operator made it public.
      ...(config.health.metricsToken !== undefined
        ? { metrics: { token: config.health.metricsToken } }
        : config.health.publicMetrics && { metrics: {} }),
    },
  });
  const server = await listen(app, config.http.host, config.http.port, config.http);
  // The gateway calling itself for a manager's upstream is refused (address-policy.ts, `self`).
  shared.addressPolicy.addOwnPort(Number(new URL(server.url).port));
  // Serving does not depend on them, so they come after listening; still before start-up is reported.
  await shared.phases.time('api: schedules', async () => {
    try {
      await ensureRetentionSchedules(client, taskQueue, config.retention);
      // Deletions interrupted between marking the project and starting the workflow resume here.
      for (const projectId of await controlPlane.projectsBeingDeleted()) await startDeletion(projectId);
    } catch (err) {
      // Serving does not depend on them; the next start-up tries again (docs/retention.md).
      logger.error({ err }, 'retention schedules or pending project deletions could not be set up');
    }
  });
  return {
    url: server.url,
    async close(graceMs) {
      // Notification streams never end on their own: end them, then drain the other requests.
      subscriptions.closeAll();
      await server.close(graceMs);
      await connection.close();
    },
  };
}

/**
 * Projects declared in the configuration file belong to a team named `config`; they and the optional
 * bootstrap file are applied idempotently. Then every project with namespacing off is checked for name
 * collisions among its upstreams (those reachable with a project or no credential).
 */
export async function applyConfiguration(
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
  // What is new or changed is probed for its protocol era before anything serves it (docs/interop.md).
  await probeChangedUpstreams(controlPlane, upstream);
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
