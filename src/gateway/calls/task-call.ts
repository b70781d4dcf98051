/**
 * A tools/call on the durable task path: the first upstream call is made (by the API itself, or by the
 * task workflow's first step), and its first outcome (a task, a synchronous result or an error) becomes
 * the answer. A call becomes a workflow once it is a task (docs/decisions.md).
 */
import type { JsonRpcErrorObject, Tool } from '../../protocol';
import { META, PROTOCOL_VERSION, ProtocolError } from '../../protocol';
import { principalId } from '../../store/control-plane/types';
import { addressOf } from '../../store/control-plane/upstream-addresses';
import type { PayloadKind } from '../../store/tasks/payload-store';
import { taskKeyOf } from '../../store/tasks/task-store';
import { relayableMeta } from '../../upstream/meta';
import type {
  ApprovalGate,
  FirstOutcome,
  HostedCall,
  TaskWorkflowInput,
  UpstreamCallPayload,
} from '../../workflows/messages';
import type { FirstCallPort, GatewayDeps, RequestContext, Result } from '../context';
import { shareOwner } from '../context';
import { finishToolResult } from './ordinary-call';
import { declaresFormElicitation } from './qualification';
import { createTaskResult } from '../responses/responses';
import { mintTaskId } from '../tasks/task-ids';
import { fromUpstream } from '../upstream-errors';
import { addLogContext } from '../../telemetry/log-context';
import { taskCreations } from '../../telemetry/metrics';
import type { RoutedCall } from './routed-call';
import { afterFailedStart } from './failed-start';

export async function startTask(ctx: RequestContext, toolCall: RoutedCall): Promise<Result> {
  const launched = await launchTask(ctx, toolCall);
  if (launched.outcome.kind !== 'task') return firstResult(ctx, launched);
  // Durable before return: the workflow recorded the task (with its detail) before answering.
  const record = await ctx.deps.store.getTask(launched.taskKey);
  if (!record) throw new ProtocolError('InternalError', 'The task was not recorded');
  return createTaskResult(launched.taskId, record.snapshot, ctx.deps.serverInfo);
}

/** The first outcome; a synchronous result the API's own first call got comes as it is, not by payload id. */
export type LaunchOutcome = FirstOutcome | { kind: 'result'; result: Result };

export interface LaunchedTask {
  taskId: string;
  taskKey: string;
  /** The upstream's alias. */
  upstream: string;
  outcome: LaunchOutcome;
}

/**
 * Makes the first upstream call and, if the upstream answers with a task, creates the durable task: from
 * the API itself (`tasks.firstCallFrom: api`, src/temporal/first-call.ts), or through a workflow started
 * with update-with-start whose first step makes the call (`worker`). A client that asked for a task
 * whatever happens (2025 `params.task`) takes the worker path: its call is a task in any case.
 */
export async function launchTask(
  ctx: RequestContext,
  toolCall: RoutedCall,
  hosted?: HostedCall,
  approval?: ApprovalGate,
): Promise<LaunchedTask> {
  const { call, deps } = ctx;
  // A hosted call is a workflow from the start (src/gateway/calls/hosted-call.ts): the worker makes the call.
  const direct = deps.firstCall && !call.tasks?.force && !hosted ? deps.firstCall : undefined;
  // A task the gateway runs itself holds a worker's activity slot for as long as it runs or queues, and
  // a call waiting for approval may wait a day: a project has a bound on those, counted in the store
  // (before the creation shares, so that a refusal takes no token from them; the count reads at most the
  // bound's number of index entries).
  if (hosted) {
    const bound = deps.shares.openHostedPerProject;
    deps.shares.admitHostedTask(await deps.store.countOpenHosted(call.project.id, bound));
  }
  // Refused here, before anything is stored, sent or started; held until the first outcome is known. On
  // the worker path that is as long as the creation occupies a worker's local-activity slot.
  const lease = deps.shares.admitCreation(shareOwner(call), { perSecond: !direct });
  try {
    const taskId = mintTaskId();
    const taskKey = taskKeyOf(taskId);
    addLogContext({ taskKey });
    const draft = { taskId, endpoint: toolCall.routed.endpoint, ...workflowInput(ctx, toolCall, taskKey) };
    const outcome = direct
      ? await firstCallFromApi(ctx, draft, direct)
      : await startWorkflow(ctx, draft, hosted, approval);
    if (outcome.kind === 'task') taskCreations.inc({ project: call.project.slug });
    return { taskId, taskKey, upstream: toolCall.routed.endpoint.alias, outcome };
  } finally {
    lease.release();
  }
}

/** What both paths start from: the task's id, its upstream, its workflow input (request not stored yet), the request. */
interface TaskDraft {
  taskId: string;
  endpoint: RoutedCall['routed']['endpoint'];
  input: TaskWorkflowInput;
  request: UpstreamCallPayload;
}

/**
 * The API's own first call. Its creation share counts it in flight but takes no per-second token: it
 * occupies no worker and no Temporal unless it becomes a task, and a task the upstream created is never
 * refused (docs/decisions.md, "The first call from the API").
 */
async function firstCallFromApi(
  ctx: RequestContext,
  { taskId, endpoint, input, request }: TaskDraft,
  firstCall: FirstCallPort,
): Promise<LaunchOutcome> {
  return firstCall.run(endpoint, {
    input,
    request,
    ...(ctx.call.tasks && { taskIdForListing: taskId }),
  });
}

/** The worker's path: the request stored, the workflow started with update-with-start. */
async function startWorkflow(
  ctx: RequestContext,
  draft: TaskDraft,
  hosted?: HostedCall,
  approval?: ApprovalGate,
): Promise<FirstOutcome> {
  const { call, deps } = ctx;
  const { taskKey } = draft.input;
  // The payload goes to the payload store; Temporal gets its id only.
  const requestRef = await deps.payloads.put(taskKey, 'request', draft.request);
  // 2025-era clients list their tasks by id (tasks/list); the store otherwise keeps hashes only.
  if (call.tasks) await deps.payloads.put(taskKey, 'task_id', draft.taskId);
  const input: TaskWorkflowInput = {
    ...draft.input,
    startDeadline: new Date(Date.parse(draft.input.createdAt) + deps.startTimeoutMs).toISOString(),
    call: { ...draft.input.call, requestRef },
    ...(hosted && { hosted }),
    ...(approval && { approval }),
  };
  try {
    // A hosted call's start update answers after its promotion window at the latest.
    return await deps.engine.start(input, deps.startTimeoutMs + (hosted?.promoteAfterMs ?? 0));
  } catch (err) {
    return afterFailedStart(deps, call.project.slug, taskKey, err);
  }
}

/** The task workflow's input (its request not stored yet) and the request's payload. */
function workflowInput(
  ctx: RequestContext,
  toolCall: RoutedCall,
  taskKey: string,
): { input: TaskWorkflowInput; request: UpstreamCallPayload } {
  const { params, routed, headers } = toolCall;
  const { call } = ctx;
  const capabilities = call.params._meta[META.clientCapabilities];
  const request: UpstreamCallPayload = {
    ...(params.arguments !== undefined && { arguments: params.arguments }),
    ...(params.inputResponses !== undefined && { inputResponses: params.inputResponses }),
    ...(params.requestState !== undefined && { requestState: params.requestState }),
    relayedMeta: relayableMeta(call.params._meta),
    ...(Object.keys(headers).length > 0 && { headers }),
  };
  const input: TaskWorkflowInput = {
    taskKey,
    project: call.project.id,
    projectSlug: call.project.slug,
    upstream: routed.endpoint.alias,
    caller: principalId(call.principal),
    principal: call.principal,
    authorizationId: routed.endpoint.authorizationId,
    upstreamAddress: addressOf(routed.endpoint.url),
    createdAt: new Date().toISOString(),
    call: {
      tool: routed.name,
      // Filled in once the request is stored (by whichever path stores it).
      requestRef: '',
      protocolVersion: PROTOCOL_VERSION,
      elicitationForm: declaresFormElicitation(capabilities),
      idempotent: isIdempotent(routed.tool),
      ...(call.tasks?.force && { forceTask: true }),
    },
    // The watch mode is fixed at creation and travels with the workflow (continue-as-new included).
    ...(ctx.deps.watchByHub && { watchBy: 'hub' as const, maxWatchMs: ctx.deps.watchByHub.maxWatchMs }),
  };
  return { input, request };
}

/** A first outcome that is not a task: the synchronous result (never cached) or the error. */
export async function firstResult(ctx: RequestContext, launched: LaunchedTask): Promise<Result> {
  const { deps } = ctx;
  const { outcome, taskKey } = launched;
  if (outcome.kind === 'result') {
    const result =
      'result' in outcome
        ? outcome.result
        : await payload<Result>(deps, outcome.resultRef, taskKey, 'result');
    return finishToolResult(ctx, result);
  }
  if (outcome.kind === 'error') {
    const error =
      'errorRef' in outcome
        ? await payload<JsonRpcErrorObject>(deps, outcome.errorRef, taskKey, 'error')
        : outcome.error;
    throw fromUpstream(launched.upstream, error, ctx.call.params._meta[META.clientCapabilities]);
  }
  throw new ProtocolError('InternalError', 'A task is not a synchronous result');
}

function isIdempotent(tool: Tool | undefined): boolean {
  return tool?.annotations?.idempotentHint === true;
}

/** A payload the workflow just stored; missing only if it was purged in between. */
async function payload<T>(deps: GatewayDeps, ref: string, taskKey: string, kind: PayloadKind): Promise<T> {
  const value = await deps.payloads.get<T>(ref, taskKey, kind);
  if (value === undefined) throw new ProtocolError('InternalError', 'The result is no longer stored');
  return value;
}
