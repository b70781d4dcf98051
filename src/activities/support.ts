/**
 * Small pieces of the task activities (src/activities/index.ts) that need no dependencies: a synchronous
 * answer as a finished task, expiry, control results, heartbeating while waiting, and the metrics of a
 * recorded status change.
 */
import { Context } from '@temporalio/activity';
import type { JsonRpcErrorObject, TaskSnapshot } from '../protocol';
import { TERMINAL_TASK_STATUSES } from '../protocol';
import { taskTerminal, taskTransitions } from '../telemetry/metrics';
import type { UpstreamReply } from '../upstream/client';
import type { RecordedAnswer } from '../store/tasks/payload-store';
import { boundedStatusMessage } from './snapshot';
import { cancellableSleep } from './sleep';
import { withoutHopMeta } from './task-metadata';
import type { ControlResult } from './types';

/**
 * A synchronous answer as a finished task: `completed` with the result, or `failed` with the error, whose
 * message (the upstream's) becomes the status message within `maxStatusMessageChars`. The result's
 * `_meta` loses what described the upstream hop (its serverInfo): whoever relays the result later
 * stamps the gateway's own.
 */
export function finishedSnapshot(
  reply: UpstreamReply | RecordedAnswer,
  bounds: { finishedTaskTtlMs?: number; maxStatusMessageChars?: number },
): TaskSnapshot {
  const now = new Date().toISOString();
  const fields = { createdAt: now, lastUpdatedAt: now, ttlMs: bounds.finishedTaskTtlMs ?? null };
  return reply.kind === 'error'
    ? {
        ...fields,
        status: 'failed',
        statusMessage: boundedStatusMessage(reply.error.message, bounds.maxStatusMessageChars),
        error: reply.error,
      }
    : { ...fields, status: 'completed', result: withoutHopMeta(reply.result) };
}

/** Past the upstream's own `createdAt + ttlMs` (the snapshot still carries the upstream's createdAt). */
export function expired(s: TaskSnapshot): boolean {
  return s.ttlMs !== null && Date.parse(s.createdAt) + s.ttlMs < Date.now();
}

export function control(reply: UpstreamReply): ControlResult {
  if (reply.kind === 'result') return { ok: true };
  return { ok: false, error: reply.error satisfies JsonRpcErrorObject };
}

/** Heartbeats every second while `work` runs. */
export async function heartbeating<T>(work: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const timer = setInterval(() => ctx.heartbeat(), 1000);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/**
 * Sleeps in short steps, heartbeating, so a cancellation request (or `stopping`) is noticed within
 * about a second.
 */
export async function sleepWithHeartbeat(ms: number, stopping?: AbortSignal): Promise<void> {
  const ctx = Context.current();
  const until = Date.now() + ms;
  for (let left = ms; left > 0 && !stopping?.aborted; left = until - Date.now()) {
    ctx.heartbeat();
    await cancellableSleep(Math.min(left, 1000), ctx.cancellationSignal);
  }
}

/** The metrics of a recorded status change (src/telemetry/metrics.ts); `project` is the project's slug. */
export function countTransition(project: string, status: string): void {
  taskTransitions.inc({ project, status });
  if (TERMINAL_TASK_STATUSES.has(status)) taskTerminal.inc({ project, status });
}
