/**
 * The worker role: the Temporal worker with the task and retention activities. Loaded only by processes
 * that run it (it brings `@temporalio/worker` and its native library). The worker is created before
 * anything it does not need: its connection, the namespace check and the workflow bundle come first.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { ActivityDeps } from '../activities';
import { createActivities } from '../activities';
import { RecentDetails } from '../activities/recent-details';
import { createWatchPoll } from '../activities/watch-poll';
import { createApprovalActivities } from '../activities/approvals';
import { ApprovalStore } from '../store/tasks/approvals';
import { FirstCalls } from '../store/tasks/first-calls';
import { HostedQueue } from '../store/tasks/hosted-queue';
import { WatchHubStore } from '../store/tasks/watch-hub';
import { createRetentionActivities } from '../activities/retention';
import { resolveTaskEndpoint } from '../store/control-plane/endpoints';
import { ProtocolError } from '../protocol';
import { createDataConverter } from '../temporal/codec';
import { CreationReconciler } from '../temporal/creation-reconciler';
import { ensureNamespaceAndSearchAttributes } from '../temporal/namespace';
import { installTemporalLogging } from '../temporal/runtime-logging';
import { TemporalTaskEngine } from '../temporal/task-engine';
import { clientTracing } from '../temporal/tracing';
import { createTaskWorker } from '../temporal/worker';
import { WatchHub } from '../temporal/watch-hub';
import { workflowClosed } from '../temporal/workflow-closed';
import { watchObservedSignal } from '../workflows/messages';
import { setApprovalsSource, setHostedQueueSource, setWatchLagSource } from '../telemetry/metrics';
import { SEARCH_ATTRIBUTES } from '../workflows/search-attributes';
import { freeLoopbackPort } from './ports';
import type { Role, Shared } from './roles';

/**
 * Core needs a concrete port for its metrics exporter, so one is picked and then bound by core; another
 * process can take it in between (seen with parallel test workers). Then another port is tried.
 */
async function installWithMetricsPort(logger: Shared['logger']): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      installTemporalLogging(logger, { metricsPort: await freeLoopbackPort() });
      return;
    } catch (err) {
      if (attempt >= 5 || !/address already in use/i.test(String(err))) throw err;
    }
  }
}

export async function startWorkerRole(shared: Shared): Promise<Role> {
  const { config, logger, cipher, upstream, store, payloads, controlPlane, serverInfo, phases } = shared;
  await installWithMetricsPort(logger.child({ component: 'temporal' }));
  const connection = await phases.time('worker: temporal connection', async () => {
    const c = await NativeConnection.connect({ address: config.temporal.address });
    if (shared.ensureNamespace)
      await ensureNamespaceAndSearchAttributes(c, config.temporal.namespace, SEARCH_ATTRIBUTES);
    return c;
  });
  // Project deletion stops task workflows through a client; connected on first use.
  let activityClient: Promise<{ client: Client; connection: Connection }> | undefined;
  const temporalClient = async () => {
    // Traced as the API's client is: the hub's signals and the reconciler's starts continue the task's trace.
    activityClient ??= Promise.all([
      Connection.connect({ address: config.temporal.address }),
      clientTracing(),
    ]).then(([c, interceptors]) => ({
      connection: c,
      client: new Client({
        connection: c,
        namespace: config.temporal.namespace,
        dataConverter: createDataConverter(cipher),
        ...(interceptors && { interceptors }),
      }),
    }));
    return (await activityClient).client;
  };
  const workerLogger = logger.child({ role: 'worker' });
  // Aborted when the worker starts to shut down: watch activities hand their task back at once.
  const stopping = new AbortController();
  const firstCalls = new FirstCalls(shared.db, undefined, config.tasks.firstCallLostAfterMs);
  const hostedQueue = new HostedQueue(shared.db);
  const approvals = new ApprovalStore(shared.db);
  const watchHubStore = new WatchHubStore(shared.db);
  const recentDetails = new RecentDetails();
  const activityDeps: ActivityDeps = {
    upstream,
    store,
    payloads,
    firstCalls,
    hostedQueue,
    workflowClosed: async (workflowId) => workflowClosed(await temporalClient(), workflowId),
    resolveUpstream: (access) => resolveTaskEndpoint(controlPlane, access).catch(denied),
    gatewayInfo: serverInfo,
    settings: {
      ...config.tasks,
      finishedTaskTtlMs: config.retention.payloadTtlMs,
      // Half the payload retention: a running task's stored detail is renewed long before it would expire.
      detailRefreshMs: Math.floor(config.retention.payloadTtlMs / 2),
      maxStatusMessageChars: config.streams.maxStatusMessageChars,
    },
    logger: workerLogger,
    stopping: stopping.signal,
    watchHub: watchHubStore,
    // One per process: what the hub's polls store, the workflows' next steps record without a read.
    recentDetails,
    // The enlisting workflow runs here, so its task is claimed here at once (its cache is warm here too).
    watchEnlisted: () => hub.nudge(),
  };
  const activities = {
    ...createActivities(activityDeps),
    ...createApprovalActivities({
      approvals,
      store,
      controlPlane,
      settings: {
        finishedTaskTtlMs: config.retention.payloadTtlMs,
        maxStatusMessageChars: config.streams.maxStatusMessageChars,
      },
    }),
    ...createRetentionActivities({ store, firstCalls, controlPlane, temporalClient, logger: workerLogger }),
  };
  let worker;
  try {
    worker = await phases.time('worker: create', () =>
      createTaskWorker({
        connection,
        namespace: config.temporal.namespace,
        taskQueue: config.temporal.taskQueue,
        cipher,
        activities,
        shutdownGraceMs: config.shutdownGraceMs,
        maxConcurrentActivities: config.temporal.maxConcurrentActivities,
        maxCachedWorkflows: config.temporal.maxCachedWorkflows,
        maxConcurrentLocalActivities: config.temporal.maxConcurrentLocalActivities,
        maxConcurrentWorkflowTasks: config.temporal.maxConcurrentWorkflowTasks,
        stackTraces: config.temporal.workflowStackTraces,
        ...(config.temporal.workflowActivationLimitMs !== undefined && {
          activationLimitMs: config.temporal.workflowActivationLimitMs,
        }),
      }),
    );
  } catch (err) {
    await connection.close();
    throw err;
  }
  const w = worker;
  const run = w.run();
  // Tasks the API recorded but did not start, and first calls lost with their sender (the worker role
  // runs it: it is background work, and every worker may run it at once; docs/decisions.md).
  const reconciler = new CreationReconciler({
    firstCalls,
    payloads,
    store,
    startCreated: async (input) =>
      new TemporalTaskEngine(await temporalClient(), config.temporal.taskQueue).startCreated(
        input,
        config.tasks.startTimeoutMs,
      ),
    logger: workerLogger.child({ component: 'creation-reconciler' }),
    everyMs: config.tasks.reconcileEveryMs,
    lostAfterMs: config.tasks.firstCallLostAfterMs,
    graceMs: config.tasks.startTimeoutMs,
  });
  reconciler.start();
  // Every worker runs a watch hub: it polls the tasks created with `tasks.watchBy: hub` (any worker's
  // hub may hold any task), and holds nothing while there are none.
  const hub = new WatchHub({
    store: watchHubStore,
    poll: createWatchPoll(activityDeps, recentDetails),
    signal: async (workflowId, observed) => {
      try {
        await (await temporalClient()).workflow.getHandle(workflowId).signal(watchObservedSignal, observed);
        return 'sent';
      } catch (err) {
        if ((err as Error).name === 'WorkflowNotFoundError') return 'gone';
        throw err;
      }
    },
    settings: config.tasks.hub,
    logger: workerLogger.child({ component: 'watch-hub' }),
  });
  hub.start();
  shared.readiness['temporal'] ??= async () => {
    await connection.workflowService.getSystemInfo({});
  };
  shared.readiness['worker'] = async () => {
    if (w.getState() !== 'RUNNING') throw new Error(`worker is ${w.getState().toLowerCase()}`);
  };
  // Every activity slot taken: a task whose watch is due now waits in Temporal's queue, unpolled. The
  // worker is still alive and doing its work, so this degrades /readyz without failing it.
  shared.degraded['watches'] = () =>
    w.getStatus().numInFlightNonLocalActivities >= config.temporal.maxConcurrentActivities;
  // The hub holds all it may (due tasks beyond it wait for another worker's hub), or its polls run
  // more than two intervals late (its upstreams or its poll caps cannot keep up): their lag shows.
  shared.degraded['watchHub'] = () => hub.atCap || hub.behind;
  setHostedQueueSource(async () =>
    (await hostedQueue.lengths()).map(({ project, upstream, waiting }) => ({
      project,
      upstream,
      value: waiting,
    })),
  );
  setApprovalsSource(async () =>
    (await approvals.pendingByUpstream()).map(({ project, upstream, waiting }) => ({
      project,
      upstream,
      value: waiting,
    })),
  );
  setWatchLagSource(async () => {
    const now = Date.now();
    // Tasks due that no watch or hub holds (from the store: every worker reports them), and this
    // worker's hub's own late polls; the larger per upstream.
    const lateMs = new Map<string, { project: string; upstream: string; ms: number }>();
    const note = (project: string, upstream: string, ms: number) => {
      const key = `${project}\u0000${upstream}`;
      if (ms > (lateMs.get(key)?.ms ?? -1)) lateMs.set(key, { project, upstream, ms });
    };
    for (const o of await store.overdueWatches()) note(o.project, o.upstream, now - Date.parse(o.dueSince));
    for (const o of hub.overdue(now)) note(o.project, o.upstream, o.lateMs);
    return Promise.all(
      [...lateMs.values()].map(async (o) => ({
        project: (await controlPlane.servedProjectById(o.project))?.slug ?? o.project,
        upstream: o.upstream,
        value: Math.max(0, o.ms / 1000),
      })),
    );
  });
  return {
    watchHub: hub,
    async close() {
      setWatchLagSource(undefined);
      setHostedQueueSource(undefined);
      setApprovalsSource(undefined);
      // Running activities get the worker's shutdown grace time (config.shutdownGraceMs), then are
      // cancelled; the worker's own grace is fixed when it is created.
      stopping.abort();
      await reconciler.stop();
      // Its tasks go back due at once: another worker's hub takes them without waiting out the leases.
      await hub.stop();
      if (w.getState() === 'RUNNING') w.shutdown();
      await run;
      await connection.close();
      if (activityClient) await (await activityClient).connection.close();
    },
  };
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
