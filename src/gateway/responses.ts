/** Result shaping shared by the gateway's handlers: server identity, task envelopes, task snapshots. */
import type { Implementation, Meta, TaskSnapshot } from '../protocol';
import { META } from '../protocol';

/** Replaces the upstream's serverInfo with the gateway's; every other `_meta` key is kept. */
export function withGatewayMeta<T extends Record<string, unknown>>(
  result: T,
  serverInfo: Implementation,
): T & { _meta: Meta } {
  const meta: Meta = { ...((result._meta as Meta | undefined) ?? {}), [META.serverInfo]: serverInfo };
  delete meta[META.legacyRelatedTask];
  return { ...result, _meta: meta };
}

/** `CreateTaskResult`: the task's fields only (details arrive with tasks/get). */
export function createTaskResult(taskId: string, s: TaskSnapshot, serverInfo: Implementation) {
  return withGatewayMeta(
    {
      resultType: 'task',
      taskId,
      status: s.status,
      ...(s.statusMessage !== undefined && { statusMessage: s.statusMessage }),
      createdAt: s.createdAt,
      lastUpdatedAt: s.lastUpdatedAt,
      ttlMs: s.ttlMs,
      ...(s.pollIntervalMs !== undefined && { pollIntervalMs: s.pollIntervalMs }),
    },
    serverInfo,
  );
}

/** `tasks/get` result: DetailedTask inlined, `resultType` "complete". */
export function getTaskResult(taskId: string, s: TaskSnapshot, serverInfo: Implementation) {
  const detail =
    s.status === 'input_required'
      ? { inputRequests: s.inputRequests ?? {} }
      : s.status === 'completed'
        ? { result: s.result ?? { content: [] } }
        : s.status === 'failed'
          ? { error: s.error ?? { code: -32603, message: s.statusMessage ?? 'Task failed' } }
          : {};
  const envelope = createTaskResult(taskId, s, serverInfo);
  return { ...envelope, ...detail, resultType: 'complete' };
}
