/** Result shaping shared by the gateway's handlers: server identity, task envelopes, task snapshots. */
import type { Implementation, Meta, TaskSnapshot } from '../../protocol';
import { META, TASK_ID_PLACEHOLDER } from '../../protocol';

/** Replaces the upstream's serverInfo with the gateway's; every other `_meta` key is kept. */
export function withGatewayMeta<T extends Record<string, unknown>>(
  result: T,
  serverInfo: Implementation,
): T & { _meta: Meta } {
  // Copied key by key rather than spread and `delete`d: a delete turns a large object into a slow one.
  const meta: Meta = {};
  const upstream = (result._meta as Meta | undefined) ?? {};
  for (const key in upstream) if (key !== META.legacyRelatedTask) meta[key] = upstream[key];
  meta[META.serverInfo] = serverInfo;
  return { ...result, _meta: meta };
}

/**
 * A result as the answer to a call: every result the gateway sends carries `resultType`, while a task's
 * result may have none (the Tasks extension leaves it free-form) and SDK clients reject a 2026-07-28
 * result without it. `complete` unless the result says otherwise. Applied by `processToolResult`, which
 * every `tools/call` result passes through; 2025-era clients get it removed by their adapter.
 */
export function asCallResult<T extends Record<string, unknown>>(result: T): T & { resultType: string } {
  const resultType = typeof result.resultType === 'string' ? result.resultType : 'complete';
  return { ...result, resultType };
}

/** Puts the gateway's task id wherever the upstream's id had been echoed (see `TASK_ID_PLACEHOLDER`). */
export function revealId<T>(value: T, gatewayTaskId: string): T {
  const text = JSON.stringify(value);
  if (text === undefined || !text.includes(TASK_ID_PLACEHOLDER)) return value;
  return JSON.parse(text.split(TASK_ID_PLACEHOLDER).join(gatewayTaskId)) as T;
}

/** `CreateTaskResult`: the task's fields only (details arrive with tasks/get). */
export function createTaskResult(taskId: string, s: TaskSnapshot, serverInfo: Implementation) {
  const envelope = withGatewayMeta(
    {
      // Extension fields first, so they can never shadow a field the gateway sets.
      ...s.extensions,
      ...(s.meta && { _meta: s.meta }),
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
  return revealId(envelope, taskId);
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
  return revealId({ ...envelope, ...detail, resultType: 'complete' }, taskId);
}
