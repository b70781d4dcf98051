/**
 * What the task benchmarks (bench/tasks.ts, bench/scale.ts) share: creating a task through the gateway,
 * running many calls with a bound on those in flight, the gateway's effective poll interval and a task
 * workflow's history counted over its continue-as-new chain.
 */
import { performance } from 'node:perf_hooks';
import type { Client } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import { parseConfig } from '../src/config/config';
import type { McpHttpClient } from './support';
import { mapLimit, sleep } from './support';

/** The gateway's default bounds on the poll interval (the gateway runs with default settings). */
const DEFAULT_TASK_SETTINGS = parseConfig({ encryption: { activeKeyId: 'k', keys: {} } }).tasks;

/** The interval the gateway polls an upstream at that suggests `suggestedMs` (activities/snapshot.ts). */
export function effectivePollMs(suggestedMs: number): number {
  const { minPollIntervalMs, maxPollIntervalMs } = DEFAULT_TASK_SETTINGS;
  return Math.min(maxPollIntervalMs, Math.max(minPollIntervalMs, suggestedMs));
}

export interface Created {
  taskId: string;
  createdAtMs: number;
  latencyMs: number;
}

/** Refusals a well-behaved client was told to retry later (`-31013` with a retry delay), counted. */
export interface Refusals {
  count: number;
}

/**
 * One task-aware call that must come back as a task. With `refusals`, it behaves as a client should
 * under back-pressure: a `-31013` refusal (a fair share is full; nothing was sent upstream) is counted and
 * the call made again after the delay it names; the latency is the accepted attempt's.
 */
export async function createTask(
  client: McpHttpClient,
  tool: string,
  args: Record<string, unknown>,
  refusals?: Refusals,
): Promise<Created> {
  for (;;) {
    const t0 = performance.now();
    const reply = await client.callTool(tool, args);
    const latencyMs = performance.now() - t0;
    if (refusals && reply.error?.code === -31013) {
      refusals.count++;
      const data = reply.error.data as { retryAfterMs?: unknown } | undefined;
      await sleep(typeof data?.retryAfterMs === 'number' ? data.retryAfterMs : 1000);
      continue;
    }
    const r = reply.result;
    if (r?.resultType !== 'task' || typeof r.taskId !== 'string' || typeof r.createdAt !== 'string') {
      throw new Error(`HTTP ${reply.status}: ${JSON.stringify(reply.error ?? r).slice(0, 200)}`);
    }
    return { taskId: r.taskId, createdAtMs: Date.parse(r.createdAt), latencyMs };
  }
}

/**
 * Runs `fn` `count` times with `limit` in flight, starting none after `seconds` (if given); the outcomes
 * that succeeded, and why the others failed.
 */
export async function many<T>(
  count: number,
  limit: number,
  fn: (i: number) => Promise<T>,
  seconds = Infinity,
) {
  const ok: T[] = [];
  const errors: string[] = [];
  const started = performance.now();
  let cut = false;
  await mapLimit(
    Array.from({ length: count }, (_, i) => i),
    limit,
    async (i) => {
      if (performance.now() - started > seconds * 1000) {
        cut = true;
        return;
      }
      try {
        ok.push(await fn(i));
      } catch (err) {
        errors.push(err instanceof Error ? err.message : String(err));
      }
    },
  );
  return { ok, errors, wallMs: performance.now() - started, cut };
}

export interface HistoryCount {
  events: number;
  runs: number;
  activitiesScheduled: number;
  localActivityMarkers: number;
}

/** Sums events over the whole continue-as-new chain, walking back from the latest run. */
export async function historyOf(client: Client, workflowId: string): Promise<HistoryCount> {
  const count: HistoryCount = { events: 0, runs: 0, activitiesScheduled: 0, localActivityMarkers: 0 };
  let runId: string | undefined = (await client.workflow.getHandle(workflowId).describe()).runId;
  const E = proto.api.enums.v1.EventType;
  while (runId) {
    const history: proto.api.history.v1.IHistory = await client.workflow
      .getHandle(workflowId, runId)
      .fetchHistory();
    const events: proto.api.history.v1.IHistoryEvent[] = history.events ?? [];
    count.runs++;
    count.events += events.length;
    for (const e of events) {
      if (e.eventType === E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) count.activitiesScheduled++;
      if (e.eventType === E.EVENT_TYPE_MARKER_RECORDED) count.localActivityMarkers++;
    }
    runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }
  return count;
}
