/**
 * The gateway's Prometheus metrics (prom-client), one registry per process, served on `/metrics` by
 * both roles. Labels are bounded: methods and statuses are from closed sets, projects and upstreams are
 * the operator's own slugs and aliases; never ids, tokens or arguments.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: 'taskrouter_' });

const LATENCY_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export const mcpRequests = new Counter({
  name: 'taskrouter_mcp_requests_total',
  help: "MCP requests by method, protocol era and outcome (ok, a gateway error code, or other: an upstream's).",
  labelNames: ['method', 'era', 'outcome'] as const,
  registers: [registry],
});

export const mcpRequestSeconds = new Histogram({
  name: 'taskrouter_mcp_request_duration_seconds',
  help: 'Time to answer an MCP request (until the reply or the end of its stream).',
  labelNames: ['method', 'era'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const taskCreations = new Counter({
  name: 'taskrouter_task_creations_total',
  help: 'Durable tasks started (the upstream answered with a task), by project.',
  labelNames: ['project'] as const,
  registers: [registry],
});

export const taskWorkflowStartSeconds = new Histogram({
  name: 'taskrouter_task_workflow_start_seconds',
  help: 'Time the API takes to start the workflow of a task its own first call created and recorded (a plain start; tasks.firstCallFrom: api).',
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const taskStartsReconciled = new Counter({
  name: 'taskrouter_task_starts_reconciled_total',
  help: 'Task workflows the creation reconciler started: recorded tasks whose start by the API did not happen.',
  registers: [registry],
});

export const firstCallsLost = new Counter({
  name: 'taskrouter_first_calls_lost_total',
  help: 'First calls declared lost: claimed as sending for tasks.firstCallLostAfterMs with no recorded answer (never sent again).',
  registers: [registry],
});

export const taskTransitions = new Counter({
  name: 'taskrouter_task_transitions_total',
  help: 'Task status changes recorded by the workers, by project and the status entered.',
  labelNames: ['project', 'status'] as const,
  registers: [registry],
});

export const taskTerminal = new Counter({
  name: 'taskrouter_task_terminal_total',
  help: 'Tasks that reached a terminal status (completed, failed, cancelled), by project.',
  labelNames: ['project', 'status'] as const,
  registers: [registry],
});

export const upstreamCalls = new Counter({
  name: 'taskrouter_upstream_calls_total',
  help: 'Requests to upstream MCP servers, by project, upstream alias, method and outcome (ok, error: a JSON-RPC error, unreachable: certainly not sent, failed: may have reached it, cancelled).',
  labelNames: ['project', 'upstream', 'method', 'outcome'] as const,
  registers: [registry],
});

export const upstreamCallSeconds = new Histogram({
  name: 'taskrouter_upstream_call_duration_seconds',
  help: 'Upstream request latency (until the answer, the end of its stream or the failure), by project, upstream alias and method.',
  labelNames: ['project', 'upstream', 'method'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const resultCache = new Counter({
  name: 'taskrouter_result_cache_total',
  help: 'Result cache lookups of ordinary tools/call, by project and result (hit or miss).',
  labelNames: ['project', 'result'] as const,
  registers: [registry],
});

export const retentionRuns = new Counter({
  name: 'taskrouter_retention_batches_total',
  help: 'Retention purge batches run, by kind (payloads, metadata).',
  labelNames: ['kind'] as const,
  registers: [registry],
});

export const retentionPurged = new Counter({
  name: 'taskrouter_retention_purged_total',
  help: 'Tasks whose payloads or metadata retention removed, by kind.',
  labelNames: ['kind'] as const,
  registers: [registry],
});

export const streamOverflows = new Counter({
  name: 'taskrouter_stream_overflows_total',
  help: 'Streams to clients ended because the client did not read them (streams.maxQueuedBytes reached), by project.',
  labelNames: ['project'] as const,
  registers: [registry],
});

export const streamCoalesced = new Counter({
  name: 'taskrouter_stream_events_coalesced_total',
  help: 'Events replaced by a newer one of the same kind (progress of a token, a task, a resource, a list kind) while a slow client read its stream, by project.',
  labelNames: ['project'] as const,
  registers: [registry],
});

export const streamNotificationsDropped = new Counter({
  name: 'taskrouter_stream_notifications_dropped_total',
  help: 'Upstream notifications not relayed to a client because they were larger than streams.maxNotificationBytes, by project.',
  labelNames: ['project'] as const,
  registers: [registry],
});

export const streamRefusals = new Counter({
  name: 'taskrouter_stream_refusals_total',
  help: 'subscriptions/listen streams refused at a cap (limit: caller or project; streams.maxPerCaller, streams.maxPerProject), by project.',
  labelNames: ['project', 'limit'] as const,
  registers: [registry],
});

export const stdioProcesses = new Gauge({
  name: 'taskrouter_stdio_processes',
  help: 'Local (stdio) upstream processes this replica runs, by project and upstream alias (one per credential scope).',
  labelNames: ['project', 'upstream'] as const,
  registers: [registry],
});

export const stdioRestarts = new Counter({
  name: 'taskrouter_stdio_restarts_total',
  help: 'Local (stdio) upstream processes started again after one crashed, by project and upstream alias.',
  labelNames: ['project', 'upstream'] as const,
  registers: [registry],
});

export const watchesRunning = new Gauge({
  name: 'taskrouter_watches_running',
  help: 'Watch activities running in this worker (one per task in flight it polls); at temporal.maxConcurrentActivities, more tasks wait unwatched and /readyz says degraded.',
  registers: [registry],
});

export const watchHubTasks = new Gauge({
  name: 'taskrouter_watch_hub_tasks',
  help: "Tasks this worker's watch hub holds and polls (tasks.watchBy: hub); at tasks.hub.maxTasks it claims no more and /readyz says degraded.",
  registers: [registry],
});

export const watchHubFailures = new Counter({
  name: 'taskrouter_watch_hub_failures_total',
  help: "Rounds of the watch hub that failed on the gateway's side (a store write, a signal to the workflow), by project and upstream alias: each is retried, after a wait that doubles with each failure in a row of its task (up to 30 s).",
  labelNames: ['project', 'upstream'] as const,
  registers: [registry],
});

/** A value per project slug and upstream alias, read from the store when `/metrics` is read. */
export type UpstreamValues = () => Promise<Array<{ project: string; upstream: string; value: number }>>;

/**
 * A gauge per project upstream whose values a role reads when `/metrics` is read (`set(source)`; none
 * without one). Series seen once stay, at 0 when the source no longer names them, so a graph shows the
 * recovery.
 */
function upstreamGauge(name: string, help: string): { gauge: Gauge; set(source?: UpstreamValues): void } {
  let source: UpstreamValues | undefined;
  const seen = new Map<string, { project: string; upstream: string }>();
  const gauge = new Gauge({
    name,
    help,
    labelNames: ['project', 'upstream'] as const,
    registers: [registry],
    async collect() {
      const values = await source?.().catch(() => undefined);
      if (!values) return;
      for (const labels of seen.values()) this.set(labels, 0);
      for (const { project, upstream, value } of values) {
        seen.set(`${project}\u0000${upstream}`, { project, upstream });
        this.set({ project, upstream }, value);
      }
    },
  });
  return { gauge, set: (s) => (source = s) };
}

/** Running tasks due for a poll that no watch makes, per project slug and upstream (store/tasks/task-watch.ts). */
const watchLagGauge = upstreamGauge(
  'taskrouter_watch_lag_seconds',
  "How long the oldest running task of the project's upstream has been due for a poll that no watch makes (its watch waits for a worker slot); 0 while every task is watched.",
);
export const watchLag = watchLagGauge.gauge;
/** Set by the worker role: where the watch lag (seconds) comes from when `/metrics` is read. */
export const setWatchLagSource = watchLagGauge.set;

const hostedQueueGauge = upstreamGauge(
  'taskrouter_hosted_queue_length',
  "Hosted calls waiting for one of the upstream's hosting.maxConcurrent slots (docs/hosted-tasks.md).",
);
export const hostedQueueLength = hostedQueueGauge.gauge;
/** Set by the worker role: where the hosted calls' queue lengths come from when `/metrics` is read. */
export const setHostedQueueSource = hostedQueueGauge.set;

const approvalsGauge = upstreamGauge(
  'taskrouter_approvals_pending',
  'Calls waiting for approval before anything is sent to the upstream (docs/approvals.md).',
);
export const approvalsPending = approvalsGauge.gauge;
/** Set by the worker role: where the counts of waiting approval requests come from. */
export const setApprovalsSource = approvalsGauge.set;

/** The exposition text: the gateway's metrics, then any extra text (the Temporal SDK's own). */
export async function metricsText(extra: () => Promise<string> = async () => ''): Promise<string> {
  return `${await registry.metrics()}\n${await extra().catch(() => '')}`;
}
