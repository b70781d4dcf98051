/** Turns an upstream task (CreateTaskResult or tasks/get result) into the gateway's snapshot. Pure. */
import { DEFAULT_STREAMS } from '../config/streams';
import type { TaskSnapshot } from '../protocol';
import { DetailedTaskSchema, TaskFieldsSchema, truncateText } from '../protocol';
import { scrubId, taskMetadata } from './task-metadata';

export interface PollBounds {
  minPollIntervalMs: number;
  maxPollIntervalMs: number;
  /** Longest `statusMessage` kept (UTF-16 code units); default `streams.maxStatusMessageChars`'s. */
  maxStatusMessageChars?: number;
}

/**
 * An upstream's status message as the gateway keeps it: cut to the bound (ending in `…`) here, where
 * the observation is made, so no longer copy is ever stored, pushed or returned.
 */
export function boundedStatusMessage(message: string, maxChars?: number): string {
  return truncateText(message, maxChars ?? DEFAULT_STREAMS.maxStatusMessageChars);
}

/** Poll interval when the upstream suggests none. */
export const DEFAULT_POLL_INTERVAL_MS = 1000;

/** Upstream suggestions are honoured within bounds: a fast-poll suggestion cannot flood the upstream. */
export function clampPollInterval(suggested: number | undefined, bounds: PollBounds): number {
  const value = suggested ?? DEFAULT_POLL_INTERVAL_MS;
  return Math.min(bounds.maxPollIntervalMs, Math.max(bounds.minPollIntervalMs, value));
}

/**
 * Validates an upstream task and keeps what the gateway re-publishes under its own id: the task fields,
 * the status detail, and bounded `_meta`/extension fields. The upstream task id, `resultType` and
 * `requestState` are dropped; any echo of the upstream id elsewhere becomes a placeholder.
 */
export function toSnapshot(
  upstreamTask: unknown,
  bounds: PollBounds,
  upstreamTaskId = '',
): TaskSnapshot | undefined {
  const snapshot = parseSnapshot(upstreamTask, bounds);
  if (!snapshot) return undefined;
  return scrubId({ ...snapshot, ...taskMetadata(upstreamTask as Record<string, unknown>) }, upstreamTaskId);
}

function parseSnapshot(upstreamTask: unknown, bounds: PollBounds): TaskSnapshot | undefined {
  const base = TaskFieldsSchema.safeParse(upstreamTask);
  if (!base.success) return undefined;
  const t = base.data;
  const snapshot: TaskSnapshot = {
    status: t.status,
    createdAt: t.createdAt,
    lastUpdatedAt: t.lastUpdatedAt,
    ttlMs: t.ttlMs,
    pollIntervalMs: clampPollInterval(t.pollIntervalMs, bounds),
    ...(t.statusMessage !== undefined && {
      statusMessage: boundedStatusMessage(t.statusMessage, bounds.maxStatusMessageChars),
    }),
  };
  if (t.status === 'working' || t.status === 'cancelled') return snapshot;
  const detailed = DetailedTaskSchema.safeParse(upstreamTask);
  if (!detailed.success) {
    // A CreateTaskResult may announce input_required without the requests (they come with tasks/get);
    // malformed requests are not the same as none.
    const absent = (upstreamTask as { inputRequests?: unknown }).inputRequests === undefined;
    return t.status === 'input_required' && absent ? { ...snapshot, inputRequests: {} } : undefined;
  }
  const d = detailed.data;
  if (d.status === 'input_required') return { ...snapshot, inputRequests: d.inputRequests };
  if (d.status === 'completed') return { ...snapshot, result: d.result };
  if (d.status === 'failed') return { ...snapshot, error: d.error };
  return snapshot;
}
