/**
 * Everything the API and the worker share about the task workflow: its input, the messages it handles
 * and their payload types. Imported by the API process, so it holds definitions only.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { InputResponses, JsonRpcErrorObject, Meta, TaskStatus } from '../protocol';
import type { Principal } from '../store/control-plane/types';
import type { ApprovalDecision, ApprovalStatus, ApproverRule } from '../store/tasks/approvals';

export const TASK_WORKFLOW_TYPE = 'taskWorkflow';
/** A hosted task: the gateway runs an ordinary tool call as its own task (docs/hosted-tasks.md). */
export const HOSTED_TASK_WORKFLOW_TYPE = 'hostedTaskWorkflow';
/**
 * A hosted task that waits for approval first (docs/approvals.md). A type of its own, so a worker that
 * predates approvals (a rolling upgrade) fails the workflow task on the unknown type, which Temporal
 * retries until an upgraded worker takes it, instead of running the call without waiting.
 */
export const APPROVAL_TASK_WORKFLOW_TYPE = 'approvalTaskWorkflow';

/** A task's owner in string form (`principalId`): what follow-ups compare against. */
export interface CallerRef {
  kind: string;
  id: string;
}

/**
 * The payload part of a task-aware call, stored by the API in the payload store (kind `request`) before
 * the workflow starts; Temporal only ever sees its id.
 */
export interface UpstreamCallPayload {
  arguments?: Record<string, unknown>;
  /** The client's `_meta` keys the gateway relays unchanged (reserved envelope keys removed). */
  relayedMeta: Meta;
  /** MRTR retry: the answers to the upstream's previous `input_required` round, relayed unchanged. */
  inputResponses?: InputResponses;
  requestState?: string;
  /** `Mcp-Param-*` headers derived from the upstream tool's input schema (they carry argument values). */
  headers?: Record<string, string>;
}

/** What the gateway asks the upstream for on the client's behalf: metadata plus the payload's id. */
export interface UpstreamCallRequest {
  /** The upstream's own tool name. */
  tool: string;
  /** Payload id of the `UpstreamCallPayload`. */
  requestRef: string;
  protocolVersion: string;
  /** Whether the client declared form elicitation on this request; the gateway declares it only then. */
  elicitationForm: boolean;
  /** Tool annotated `idempotentHint`: only then may the first call be re-sent after it may have arrived. */
  idempotent: boolean;
  /**
   * The client asked for a task whatever the upstream does (2025-11-25 `params.task`): a synchronous
   * answer is recorded as an already finished task.
   */
  forceTask?: boolean;
}

/** A client's `tasks/update`: the answers are a payload (kind `input_responses`); the keys are metadata. */
export interface InputSignal {
  ref: string;
  keys: string[];
  /**
   * The answered keys that the gateway's record showed the client as open. The watch records a change
   * in the store before the workflow applies it, so a client can answer a request the workflow has not
   * observed yet: such an answer is taken (and forwarded; the upstream asked for it), not dropped.
   * Absent in signals from before this field: then only what the workflow observed counts.
   */
  open?: string[];
}

/**
 * What the workflow knows of the upstream task: metadata only. The detail (status message, input
 * requests, result, error, re-published metadata) is a payload (kind `detail`) the watch stored; the
 * workflow holds its id, the outstanding input keys with their method/mode, and a hash of what decides
 * a change.
 */
export interface TaskObservation {
  status: TaskStatus;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs?: number;
  /** `snapshotKey` of the observed detail (src/store/tasks/snapshot-key.ts): decides what counts as a change. */
  key: string;
  /** Payload id of the observed detail; absent for a failure the gateway decided. */
  detailRef?: string;
  /** Outstanding input requests (while `input_required`): method and mode only. */
  inputs?: Record<string, { method: string; mode?: string }>;
  /** A failure the gateway decided itself (its message is the gateway's, not upstream content). */
  gatewayError?: JsonRpcErrorObject;
}

/**
 * State carried across continue-as-new; also the first input of a workflow the API starts for a task
 * its own first call created (the upstream task id and the recorded first observation).
 */
export interface CarriedTaskState {
  upstreamTaskId: string;
  observed: TaskObservation;
  answeredKeys: string[];
  /** Answers waiting to be forwarded: payload id and the keys accepted from it. */
  pendingInputs: InputSignal[];
  /** The upstream acknowledged a `tasks/cancel` for this task. */
  cancelSent: boolean;
}

export interface TaskWorkflowInput {
  /** SHA-256 of the gateway task id (the id itself is never given to Temporal). */
  taskKey: string;
  /** Project id. */
  project: string;
  /** Project slug, for operators (search attribute, summary). */
  projectSlug: string;
  /** Upstream alias. */
  upstream: string;
  caller: CallerRef;
  /** Who started the task: activities look up this principal's upstream credential on every call. */
  principal: Principal;
  /** The upstream authorization the task started with; its credential, and only it, is used throughout. */
  authorizationId: string | null;
  /**
   * The upstream's address when the task was created: the task's requests go there or nowhere (an
   * upstream re-pointed meanwhile fails the task). Absent in tasks started before it was recorded.
   */
  upstreamAddress?: string;
  createdAt: string;
  /**
   * After this (ISO time) the first upstream call is never sent: the API has told the client the task
   * could not be started (no worker took it in time), so sending would be a side effect nobody knows of.
   */
  startDeadline?: string;
  call: UpstreamCallRequest;
  carried?: CarriedTaskState;
  /** Present for a hosted task (HOSTED_TASK_WORKFLOW_TYPE): the upstream runs an ordinary call. */
  hosted?: HostedCall;
  /** Present for a call that waits for approval before anything is sent (docs/approvals.md). */
  approval?: ApprovalGate;
  /**
   * `hub`: the task is polled by the workers' watch hub, which signals the workflow on a change
   * (`tasks.watchBy`, src/workflows/hub-watch.ts). Absent (every task before it, and the default): one
   * watch activity at a time polls it. Decided at creation, carried across continue-as-new.
   */
  watchBy?: 'hub';
  /** With `watchBy: hub`: how long the workflow waits for a signal before it enlists again (`tasks.hub.reenlistAfterMs`). */
  maxWatchMs?: number;
  /**
   * The API enlisted the task it created with the watch hub (CREATED_ENLISTMENT), due at the first poll
   * the workflow's own enlistment would make: a first run that started before `adoptBefore` (ISO time,
   * the row's due time less a margin for clocks) waits on that row instead of enlisting the task again
   * (src/workflows/hub-watch.ts). Absent unless `tasks.hub.adoptApiEnlistment` is on and the row falls
   * due at the task's own interval.
   */
  createdEnlistment?: { adoptBefore: string };
}

/** What a call waiting for approval is bound to and waits for (src/workflows/approval-gate.ts). */
export interface ApprovalGate {
  /** The approval request's id (store/tasks/approvals.ts). */
  id: string;
  /** SHA-256 of the canonical arguments. */
  argsSha256: string;
  policyVersion: number;
  expiresAt: string;
  /** The approvers and how many must approve, as the policy said at its version (stored with the request). */
  rule: ApproverRule;
}

/** One approver's decision, checked by the API (who may) before the workflow takes it (when). */
export type ApprovalVote = Omit<ApprovalDecision, 'at'>;

/** The request after the vote: its state and the approvals counted so far. */
export interface ApprovalAnswer {
  status: ApprovalStatus;
  approvals: number;
  required: number;
}

/** How a hosted call runs, as its upstream's hosting policy said when the call came (src/config/hosting.ts). */
export interface HostedCall {
  /** The client gets the synchronous answer if it comes within this window, else a task handle. */
  promoteAfterMs: number;
  /** The call may be sent again after an interruption (a worker lost while it ran). */
  repeatable: boolean;
  /** How long the call may wait for its answer (`hosting.callDeadlineMs`; restarted by progress). */
  callDeadlineMs?: number;
  /** Hosted calls to this upstream running at once; more wait in arrival order. Absent: no limit. */
  maxConcurrent?: number;
  /** The project upstream's control-plane id (what its queue is kept under). */
  upstreamId?: string;
}

export interface TaskWorkflowResult {
  outcome: 'result' | 'error' | 'task';
  status?: TaskStatus;
}

/**
 * The first upstream outcome of a task-aware call, returned by the start update. A synchronous result or
 * error is a payload (kinds `result`, `error`): the update carries its id.
 */
export type FirstOutcome =
  | { kind: 'result'; resultRef: string }
  /** An upstream's JSON-RPC error (a payload, by id), or one the gateway decided itself (inline). */
  | ({ kind: 'error' } & ({ errorRef: string } | { error: JsonRpcErrorObject }))
  | { kind: 'task'; observation: TaskObservation };

/** Resolves with the first upstream outcome; used with update-with-start. */
export const startTaskUpdate = defineUpdate<FirstOutcome>('startTask');
/**
 * Sent by a hosted call that gave its upstream's slot back to the calls waiting first in line
 * (workflows/hosted-slot.ts): look at the queue now rather than at the next timer.
 */
export const hostedSlotFreedSignal = defineSignal('hostedSlotFreed');
/** A client's `tasks/update` input responses (by payload id). */
export const provideInputSignal = defineSignal<[InputSignal]>('provideInput');
/**
 * A client's `tasks/cancel`: an update, so the client's acknowledgement comes after the upstream took
 * the cancel request (or with the upstream's refusal), never from a local pretend-cancel.
 */
export const cancelTaskUpdate = defineUpdate<CancelOutcome>('cancelTask');

/**
 * An approver's decision: an update, so the approver hears at once whether it counted; refused (by the
 * update's validator) when the request is no longer pending or this approver already decided.
 */
export const decideApprovalUpdate = defineUpdate<ApprovalAnswer, [ApprovalVote]>('decideApproval');

export type CancelOutcome = { ok: true } | { ok: false; error: JsonRpcErrorObject };
/** The task as the client should see it now (answered input keys already removed), without payload. */
export const snapshotQuery = defineQuery<TaskObservation | null>('snapshot');

/** How one watch ended (the watch activity's result; the watch hub's signal). */
export type WatchUpstreamTaskResult =
  | {
      kind: 'changed';
      observation: TaskObservation;
      /**
       * The poll that saw this end (completed or failed) recorded it in the store itself
       * (activities/watch-poll.ts, recordEnd): the workflow's own record would change nothing.
       */
      recorded?: true;
    }
  /** Nothing the workflow must act on changed within the watch time. */
  | { kind: 'unchanged' }
  /** The upstream no longer knows the task (expired or purged). */
  | { kind: 'lost'; error: JsonRpcErrorObject }
  /** Polls failed more often in a row than the configured budget. */
  | { kind: 'unreachable'; message: string }
  /** The task cannot be followed: its answer passes a bound (-31014) that a next poll would pass too. */
  | { kind: 'failed'; error: JsonRpcErrorObject }
  /** The upstream's `createdAt + ttlMs` passed while the task was still not terminal. */
  | { kind: 'expired' };

/** The watch hub's word on an enlisted task (anything but `unchanged`), for the enlistment `generation`. */
export interface WatchObserved {
  generation: string;
  result: WatchUpstreamTaskResult;
}
/** Sent by a worker's watch hub when a task it polls changed; an older enlistment's is ignored. */
export const watchObservedSignal = defineSignal<[WatchObserved]>('watchObserved');

/**
 * The generation of the enlistment the API writes with the task it created and recorded itself
 * (src/temporal/first-call.ts): the hub polls the task from then on, before its workflow has run (under a
 * burst of creations a new workflow's first workflow task can wait minutes in Temporal's queue). The
 * workflow's own enlistments are `<runId>/<n>`; it takes this one's word before its first, or instead of
 * its first when it adopts the row (`TaskWorkflowInput.createdEnlistment`).
 */
export const CREATED_ENLISTMENT = 'created';

/**
 * A new task's row as the store records it (snapshot aside), from what its creation knows: the same
 * fields whether the workflow, the hosted call or the API's own first call records it.
 */
export function taskRowOf(
  input: Pick<TaskWorkflowInput, 'taskKey' | 'project' | 'caller' | 'upstream' | 'authorizationId'> & {
    call: { tool: string };
  },
  workflowId: string,
) {
  return {
    taskKey: input.taskKey,
    workflowId,
    project: input.project,
    caller: input.caller,
    upstream: input.upstream,
    tool: input.call.tool,
    authorizationId: input.authorizationId,
  };
}

/** Workflow id of a task: derived from the task key, so it reveals nothing usable as a task id. */
export function taskWorkflowId(taskKey: string): string {
  return `task-${taskKey.slice(0, 32)}`;
}

// ── Retention and project deletion (src/workflows/retention.ts, project-deletion.ts) ──────────────

export const RETENTION_WORKFLOW_TYPE = 'retentionWorkflow';

export type RetentionKind = 'payloads' | 'metadata';

export interface PurgeBatchInput {
  kind: RetentionKind;
  /** ISO time: what was stored (payloads) or created (metadata) before it goes. */
  cutoff: string;
  batchSize: number;
}

export interface StopProjectTasksInput {
  projectId: string;
  /** Task key after which this page starts ('' for the first page). */
  afterKey: string;
  batchSize: number;
}

export interface StopProjectTasksResult {
  count: number;
  lastKey: string;
}

export interface RetentionWorkflowInput {
  kind: RetentionKind;
  ttlMs: number;
  batchSize: number;
  /** Pause between batches (spreads database load). */
  batchPauseMs?: number;
  /** Carried across continue-as-new. */
  cutoff?: string;
  purged?: number;
}

export interface RetentionWorkflowResult {
  kind: RetentionKind;
  cutoff: string;
  /** Tasks handled by this run (across continue-as-new). */
  purged: number;
}

export const PROJECT_DELETION_WORKFLOW_TYPE = 'projectDeletionWorkflow';

export function projectDeletionWorkflowId(projectId: string): string {
  return `project-deletion-${projectId}`;
}

export interface ProjectDeletionInput {
  projectId: string;
  batchSize: number;
  /** Carried across continue-as-new. */
  phase?: 'stop' | 'delete';
  afterKey?: string;
}
