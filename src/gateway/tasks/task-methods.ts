/**
 * Task follow-ups: `tasks/get`, `tasks/update` and `tasks/cancel`, the answer and cancel controls they
 * share with the dashboard, the ownership check every follow-up passes first (audited when refused),
 * and the task's current snapshot (the live workflow's view when it answers in time, else the store's).
 */
import type { InputResponses, TaskSnapshot } from '../../protocol';
import {
  CancelTaskParamsSchema,
  GetTaskParamsSchema,
  META,
  ProtocolError,
  TASKS_EXTENSION,
  TERMINAL_TASK_STATUSES,
  UpdateTaskParamsSchema,
} from '../../protocol';
import { principalId } from '../../store/control-plane/types';
import { answeredInputHash } from '../../store/tasks/answered-inputs';
import type { TaskRecord } from '../../store/tasks/task-store';
import { taskKeyOf } from '../../store/tasks/task-store';
import { staleAfterMs } from '../../store/tasks/task-watch';
import { taskWorkflowId } from '../../workflows/messages';
import type { GatewayDeps, RequestContext, Result } from '../context';
import { errorName, parseParams } from '../context';
import { discoverUpstream } from '../forwarding';
import { declaresFormElicitation, declaresTasks, upstreamRunsTasks } from '../calls/qualification';
import { getTaskResult, withGatewayMeta } from '../responses/responses';
import { enabledUpstreams } from '../name-owners';
import { fromUpstream } from '../upstream-errors';

export async function getTask(ctx: RequestContext): Promise<Result> {
  const params = parseParams(GetTaskParamsSchema, ctx.call.params);
  const task = await ownedTask(ctx, taskKeyOf(params.taskId));
  // Payload retention removed the result (docs/retention.md); the metadata stays until its own purge.
  if (task.payloadExpired)
    throw new ProtocolError('InvalidParams', 'Failed to retrieve task: Task has expired');
  const snapshot = currentSnapshot(task);
  return withStaleness(getTaskResult(params.taskId, snapshot, ctx.deps.serverInfo), task, snapshot);
}

/** The `_meta` key of a status the gateway cannot vouch for as current (docs/gateway.md, "`_meta`"). */
export const STALE_STATUS_META_KEY = 'com.taskrouter/staleStatus';

/**
 * A running task whose next poll is more than two poll intervals (at least 2 s) late, because its watch
 * waits for a worker slot (store/tasks/task-watch.ts): the status is still the last one the upstream gave,
 * but the answer says since when it has not been checked, under the gateway's own `_meta` key. The
 * status itself is never changed: only the upstream knows it, and `working` is the truth as last seen.
 */
function withStaleness<T extends { _meta: Record<string, unknown> }>(
  result: T,
  task: TaskRecord,
  snapshot: TaskSnapshot,
): T {
  if (task.watchDueAt === undefined || TERMINAL_TASK_STATUSES.has(snapshot.status)) return result;
  const overdueMs = Date.now() - Date.parse(task.watchDueAt);
  if (!(overdueMs > staleAfterMs(snapshot.pollIntervalMs))) return result;
  return {
    ...result,
    _meta: { ...result._meta, [STALE_STATUS_META_KEY]: { checkedAt: task.watchDueAt, overdueMs } },
  };
}

export async function updateTask(ctx: RequestContext): Promise<Result> {
  const params = parseParams(UpdateTaskParamsSchema, ctx.call.params);
  await answerTaskInput(ctx, taskKeyOf(params.taskId), params.inputResponses);
  return ack(ctx);
}

export async function cancelTask(ctx: RequestContext): Promise<Result> {
  const params = parseParams(CancelTaskParamsSchema, ctx.call.params);
  await cancelTaskByKey(ctx, taskKeyOf(params.taskId));
  return ack(ctx);
}

// The two protocol controls, by task key: `tasks/update` and `tasks/cancel` above and the dashboard's
// answer and cancel buttons (src/api/dashboard) go through these, so both apply the same checks.

/** Relays form answers to a task of this caller (tasks/update); a terminal task ignores them. */
export async function answerTaskInput(
  ctx: RequestContext,
  taskKey: string,
  inputResponses: InputResponses,
): Promise<void> {
  const { call, deps } = ctx;
  const task = await ownedTask(ctx, taskKey);
  if (TERMINAL_TASK_STATUSES.has(task.snapshot.status)) return;
  if (Object.keys(inputResponses).length > 0) {
    // Answers relay form elicitation only, so the request answering must itself declare form support.
    if (!declaresFormElicitation(call.params._meta[META.clientCapabilities])) {
      throw new ProtocolError(
        'MissingRequiredClientCapability',
        'Answering input requires form elicitation',
        {
          requiredCapabilities: { elicitation: { form: {} } },
        },
      );
    }
    // A hosted task's answers go to its own workflow, which sends them with the call's retry.
    if (!task.hosted) await requireUpstreamTasks(ctx, task, 'tasks/update');
  }
  const keys = Object.keys(inputResponses);
  // Answers to requests that are not open count for nothing, here as in the workflow. What this record
  // shows open the workflow takes even if it has not applied that change yet (the watch records it first).
  const open = Object.keys(task.snapshot.inputRequests ?? {});
  const answered = keys.filter((key) => open.includes(key));
  const ref = await deps.payloads.put(task.taskKey, 'input_responses', inputResponses);
  const sent = await recordRequest(
    deps,
    () =>
      deps.engine.provideInput(task.workflowId, {
        ref,
        keys,
        ...(answered.length > 0 && { open: answered }),
      }),
    task.taskKey,
  );
  // What the workflow now hides, tasks/get hides too (currentSnapshot). After the signal, never before:
  // a request shown answered that the workflow never received would leave the upstream waiting for good.
  if (sent === ENDED || answered.length === 0) return;
  // Unrecorded, the requests stay shown as open: the client may answer again, and the workflow ignores it.
  await deps.store
    .recordAnsweredInputs(task.taskKey, answered)
    .catch((err: unknown) => deps.logger.warn({ err: errorName(err) }, 'answered inputs not recorded'));
}

/** Cancels a task of this caller (tasks/cancel); the upstream's refusal is the caller's error. */
export async function cancelTaskByKey(ctx: RequestContext, taskKey: string): Promise<void> {
  const { deps } = ctx;
  const task = await ownedTask(ctx, taskKey);
  if (TERMINAL_TASK_STATUSES.has(task.snapshot.status)) return;
  // A hosted task is the gateway's own: its workflow aborts the upstream call, whatever the upstream runs.
  if (!task.hosted) await requireUpstreamTasks(ctx, task, 'tasks/cancel');
  const outcome = await recordRequest(
    deps,
    () => deps.engine.cancel(task.workflowId, deps.startTimeoutMs),
    task.taskKey,
  );
  // Ended meanwhile (a cancel or the result got there first): cancelling an ended task does nothing.
  if (outcome === ENDED) return;
  // The upstream refused: the client hears it, and nothing pretends the task was cancelled.
  if (!outcome.ok)
    throw fromUpstream(task.upstream, outcome.error, ctx.call.params._meta[META.clientCapabilities]);
}

function ack(ctx: RequestContext): Result {
  return withGatewayMeta({ resultType: 'complete' }, ctx.deps.serverInfo);
}

/** The upstream's current discovery must still offer Tasks for a follow-up to be forwarded. */
async function requireUpstreamTasks(ctx: RequestContext, task: TaskRecord, operation: string): Promise<void> {
  const upstream = enabledUpstreams(ctx.call.project).find((u) => u.alias === task.upstream);
  if (!upstream) {
    throw new ProtocolError(
      'UpstreamRefused',
      `Upstream "${task.upstream}" is no longer available for ${operation}`,
    );
  }
  if (!upstreamRunsTasks(await discoverUpstream(ctx.deps.discovery, await ctx.resolve(upstream)))) {
    throw new ProtocolError('UpstreamRefused', `Upstream "${task.upstream}" no longer supports ${operation}`);
  }
}

/**
 * The task if it belongs to this project and caller, and the upstream authorization it started with
 * is still valid. A task of another project or caller gets the same answer as an unknown id (after the
 * same single lookup), so a foreign task is indistinguishable from a missing one. Every refusal is
 * audited; none has any other effect.
 */
export async function ownedTask(ctx: RequestContext, taskKey: string): Promise<TaskRecord> {
  const { call, deps } = ctx;
  if (!declaresTasks(call.params._meta[META.clientCapabilities])) {
    throw new ProtocolError('MissingRequiredClientCapability', 'This request requires the Tasks extension', {
      requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
    });
  }
  const task = await deps.store.getTask(taskKey);
  const caller = principalId(call.principal);
  const owned =
    task !== undefined &&
    task.project === call.project.id &&
    task.caller.kind === caller.kind &&
    task.caller.id === caller.id &&
    task.workflowId === taskWorkflowId(task.taskKey);
  if (!owned) {
    auditDenied(ctx, 'unknown or foreign task');
    throw new ProtocolError('InvalidParams', 'Failed to retrieve task: Task not found');
  }
  if (task.authorizationId !== null && !(await deps.controlPlane.authorizationValid(task.authorizationId))) {
    auditDenied(ctx, 'upstream authorization no longer valid');
    throw new ProtocolError(
      'UpstreamAuthorizationMissing',
      `The authorization for upstream "${task.upstream}" this task was started with is no longer valid`,
      { upstream: task.upstream },
    );
  }
  return task;
}

/** Not awaited: a refusal must not take longer (or shorter) because it is written down. */
function auditDenied(ctx: RequestContext, reason: string): void {
  const { call, deps } = ctx;
  const caller = principalId(call.principal);
  deps.controlPlane
    .audit({
      projectId: call.project.id,
      actor: `${caller.kind}:${caller.id}`,
      action: 'task.access_denied',
      detail: { reason },
    })
    .catch((err: unknown) => deps.logger.warn({ err: errorName(err) }, 'audit write failed'));
}

/**
 * The task as its client sees it, from the store alone: a task waiting for input shows only the requests
 * its client has not answered yet (`answeredInputs`, recorded when tasks/update hands answers to the
 * workflow; keys are unique for a task's whole life), and `working` once every one is answered, as the
 * workflow's own view does (TaskState.present) until the upstream's next answer is recorded. So polling
 * a task costs an ordinary read whatever its status, never a Temporal round trip through a worker that
 * may be busy (issue 23; a query answered late held clients past their own deadlines under load).
 */
export function currentSnapshot(task: TaskRecord): TaskSnapshot {
  const stored = task.snapshot;
  if (TERMINAL_TASK_STATUSES.has(stored.status)) return stored;
  const { inputRequests: all, ...rest } = stored;
  if (stored.status !== 'input_required') return rest;
  if (!task.answeredInputs) return stored;
  const answered = new Set(task.answeredInputs);
  const open = Object.entries(all ?? {}).filter(([key]) => !answered.has(answeredInputHash(key)));
  if (open.length === 0) return { ...rest, status: 'working' };
  return { ...rest, inputRequests: Object.fromEntries(open) };
}

const ENDED = Symbol('ended');

/**
 * Hands a follow-up to the task workflow; failing to record it is an error, never a silent drop. A
 * workflow that ended between the status read and the request (a second cancel right after the first, a
 * cancel as the result arrives) refuses it, and its terminal status is recorded before it ends: then the
 * follow-up is answered as one on an ended task (ENDED), not as a 503 the client could do nothing about.
 */
async function recordRequest<T>(
  deps: GatewayDeps,
  send: () => Promise<T>,
  taskKey: string,
): Promise<T | typeof ENDED> {
  try {
    return await send();
  } catch (err) {
    const now = await deps.store.getTask(taskKey).catch(() => undefined);
    if (now && TERMINAL_TASK_STATUSES.has(now.snapshot.status)) return ENDED;
    deps.logger.error({ err: errorName(err) }, 'task request not recorded');
    throw new ProtocolError('TaskEngineUnavailable', 'The gateway could not record the request; try again');
  }
}
