/** Inputs and outputs of the task activities (shared with the workflow as types only). */
import type { JsonRpcErrorObject } from '../protocol';
import type { Principal } from '../store/control-plane/types';
import type { CallerRef, TaskObservation, UpstreamCallRequest } from '../workflows/messages';

/** Whose credential reaches which upstream: resolved afresh for every upstream request. */
export interface UpstreamAccess {
  /** Project id. */
  project: string;
  /** Upstream alias. */
  upstream: string;
  principal: Principal;
  /** The authorization the task is bound to; a different (or no longer valid) one is never used. */
  authorizationId: string | null;
  /** The address the task was created against; the upstream re-pointed elsewhere is not asked (absent: old tasks). */
  upstreamAddress?: string;
}

export interface UpstreamTaskRef extends UpstreamAccess {
  upstreamTaskId: string;
  protocolVersion: string;
}

export interface CallUpstreamToolInput extends UpstreamAccess {
  taskKey: string;
  call: UpstreamCallRequest;
  /** ISO time after which the call is not sent (TaskWorkflowInput.startDeadline). */
  startDeadline?: string;
}

export type CallUpstreamToolResult =
  | { kind: 'result'; resultRef: string }
  | { kind: 'error'; errorRef: string }
  | { kind: 'task'; upstreamTaskId: string; observation: TaskObservation };

export interface WatchUpstreamTaskInput extends UpstreamTaskRef {
  taskKey: string;
  /**
   * The project's slug, which labels the metrics of the end the watch records itself (watch-poll.ts).
   * Absent in watches enlisted before it was added: their workflow records the end, as it did then.
   */
  projectSlug?: string;
  /** `key` of the last observation the workflow holds. */
  knownKey: string;
  pollIntervalMs: number;
  /**
   * While the task asks for input: the observed detail (payload id) and the input keys the client has
   * not answered yet. The upstream client gets those requests back on every poll, because a 2025-era
   * upstream sends an input request only once (src/upstream/legacy/tasks.ts).
   */
  openInput?: { detailRef: string; keys: string[] };
}

/** A task enlisted with the watch hub (store/tasks/watch-hub.ts): what a poll needs, and whose it is. */
export interface EnlistWatchInput extends WatchUpstreamTaskInput {
  workflowId: string;
  /** The enlistment's token (`<runId>/<n>`): the hub's signal carries it back. */
  generation: string;
}

/** What a watch-hub row holds for its polls: the watch input and the trace context the task runs in. */
export interface HubWatchInput extends WatchUpstreamTaskInput {
  trace?: Record<string, string>;
}

/** Defined with the signal that carries it (src/workflows/messages.ts). */
export type { WatchUpstreamTaskResult } from '../workflows/messages';

export interface SendTaskInputInput extends UpstreamTaskRef {
  taskKey: string;
  /** Payload id of the client's answers, and the keys of them to forward. */
  ref: string;
  keys: string[];
}

export type ControlResult = { ok: true } | { ok: false; error: JsonRpcErrorObject };

export interface RecordTaskCreatedInput {
  taskKey: string;
  workflowId: string;
  project: string;
  caller: CallerRef;
  upstream: string;
  tool: string;
  authorizationId: string | null;
  observation: TaskObservation;
}

export interface RecordTaskSnapshotInput {
  taskKey: string;
  observation: TaskObservation;
  /** Project slug, for the metrics (absent in histories written before it was passed). */
  project?: string;
}

/** A hosted call (the gateway's own task around an ordinary upstream tools/call). */
export interface CallHostedToolInput extends UpstreamAccess {
  taskKey: string;
  call: UpstreamCallRequest;
  /** When the client's call came (the task's `createdAt`). */
  createdAt: string;
  /** The call may be sent again after an interruption (HostedCall.repeatable). */
  repeatable: boolean;
  /** HostedCall.callDeadlineMs; absent (histories from before it): the upstream client's own deadlines. */
  callDeadlineMs?: number;
  /**
   * Which exchange of the call this is: 0 the call itself, then one more per round of input the upstream
   * asked for (an MRTR retry carrying the answers and the upstream's `requestState`).
   */
  round?: number;
  /** A retry's request (payload kind `request`: the call with the upstream's `requestState`). */
  roundRequestRef?: string;
  /** The client's answers for a retry (payloads of kind `input_responses`), merged in order. */
  answers?: string[];
}

export interface StartHostedTaskInput extends CallUpstreamToolInput {
  workflowId: string;
  caller: CallerRef;
  createdAt: string;
}

/**
 * How a hosted call ended: the upstream's answer (a result, `isError` included, or a JSON-RPC error),
 * stored as a payload (kinds `result`, `error`) and as the task's final detail (`observation`), which the
 * workflow records unless the task ended otherwise meanwhile (cancelled).
 */
export type CallHostedToolResult =
  | { kind: 'result'; resultRef: string; observation: TaskObservation }
  | { kind: 'error'; errorRef: string; observation: TaskObservation }
  /** The upstream asks for input (`input_required` observed); the answers go with `nextRequestRef`. */
  | { kind: 'input'; observation: TaskObservation; nextRequestRef: string };

/** A status the gateway itself gives a hosted task (started, cancelled, interrupted). */
export interface RecordHostedStatusInput {
  taskKey: string;
  project: string;
  status: 'working' | 'cancelled' | 'failed';
  statusMessage: string;
  createdAt: string;
  /** For `failed`: the error the task ends with. */
  error?: JsonRpcErrorObject;
}

/** A hosted call waiting for one of its upstream's `maxConcurrent` slots (store/tasks/hosted-queue.ts). */
export interface HostedSlotInput {
  taskKey: string;
  /** The upstream's control-plane id (the queue is per project upstream). */
  upstreamId: string;
  /** Upstream alias, for the status message. */
  upstream: string;
  maxConcurrent: number;
  createdAt: string;
}

/** One look at the queue (takeHostedSlot). */
export interface TakeHostedSlotInput extends HostedSlotInput {
  /** The place the task's status message shows (the last look's); absent at the first look. */
  shown?: number;
  /** The request this round sends (payload kind `request`): gone, the call cannot be made. */
  requestRef?: string;
}

/** A slot given back, or lent while the upstream waits for the client's answer (giveBackHostedSlot). */
export interface GiveBackHostedSlotInput {
  taskKey: string;
  upstreamId: string;
  maxConcurrent: number;
  keepPlace?: boolean;
}
