/**
 * A task's first upstream call: the last word before it is sent, the sending, and the record of what
 * the upstream answered (the activity around them is in index.ts). The claim
 * in the store (store/tasks/first-calls.ts) decides, not the clock alone: the first call is a local activity,
 * which runs again when its worker dies before the workflow task completes, by then often past the start
 * deadline. Only the store knows whether the earlier run had already sent the call and what the upstream
 * answered: the task it created or its synchronous answer, each recorded before anything else. The run
 * after a crash takes that answer up instead of sending the call again or reporting it as never sent;
 * only an answer lost with the worker (between its arrival and its record) ends the task with an error.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Implementation } from '../protocol';
import { METHOD } from '../protocol';
import type { FirstCalls } from '../store/tasks/first-calls';
import type { PayloadStore, RecordedAnswer } from '../store/tasks/payload-store';
import { answerOf } from '../store/tasks/payload-store';
import type { UpstreamClient, UpstreamEndpoint, UpstreamReply } from '../upstream/client';
import { taskPathCapabilities, upstreamMeta } from '../upstream/meta';
import type { UpstreamCallPayload, UpstreamCallRequest } from '../workflows/messages';
import { FAILURE } from './failures';
import { requiredPayload, sendRetryingUndelivered, toolCallParams } from './upstream-send';
import type { CallUpstreamToolInput, UpstreamAccess } from './types';
import { cancellableSleep } from './sleep';

/**
 * Send the call now, or take up what an earlier run of the activity got: the upstream task its call
 * created, or the upstream's synchronous answer.
 */
export type FirstCallClaim =
  { send: true } | { send: false; upstreamTaskId: string } | { send: false; answer: RecordedAnswer };

interface ClaimDeps {
  /** Absent in unit tests: then only the deadline counts. */
  firstCalls?: FirstCalls;
  payloads: PayloadStore;
}

/** What sending the call needs (ActivityDeps in index.ts). */
interface SendDeps {
  upstream: UpstreamClient;
  payloads: PayloadStore;
  resolveUpstream(access: UpstreamAccess): Promise<UpstreamEndpoint>;
  gatewayInfo: Implementation;
  /** Keeps the call's claim fresh while it is in flight (absent in unit tests). */
  firstCalls?: Pick<FirstCalls, 'whileSending'>;
}

function notStarted(): ApplicationFailure {
  return ApplicationFailure.create({
    message: 'The task did not start before its deadline; nothing was sent to the upstream',
    type: FAILURE.notStarted,
    nonRetryable: true,
  });
}

/**
 * In time, the call is claimed as `sending`. Past the deadline the API may already have told the client
 * that nothing was sent: the creation is claimed as abandoned instead, unless a run of this activity
 * claimed the call first. A claim already there is the API's abandonment (nothing is sent) or an earlier
 * run's: the answer it recorded (an upstream task or a synchronous answer) is taken up; without one the
 * call may have been sent and its answer lost, and it is sent again only for idempotent tools.
 */
export async function claimFirstCall(deps: ClaimDeps, input: CallUpstreamToolInput): Promise<FirstCallClaim> {
  const late = input.startDeadline !== undefined && Date.now() > Date.parse(input.startDeadline);
  const claim = await deps.firstCalls?.claim(input.taskKey, late ? 'abandoned' : 'sending');
  if (!claim || claim.won) {
    if (late) throw notStarted();
    return { send: true };
  }
  if (claim.state === 'abandoned') throw notStarted();
  const recorded = await deps.payloads.firstOfKinds<unknown>(input.taskKey, ANSWER_KINDS);
  if (recorded?.kind === 'upstream_task_id') return { send: false, upstreamTaskId: String(recorded.value) };
  const answer = answerOf(recorded);
  if (answer) return { send: false, answer };
  // A claim the reconciler declared lost is never sent again, whatever the tool.
  if (input.call.idempotent && claim.state !== 'lost') return { send: true };
  throw ApplicationFailure.create({
    message: `The call to upstream "${input.upstream}" was interrupted after it was sent and its answer was lost; it was not repeated because the tool is not idempotent`,
    type: FAILURE.callOutcomeUnknown,
    nonRetryable: true,
  });
}

/** What a run of the first call records of the upstream's answer, first thing (one of these). */
const ANSWER_KINDS = ['upstream_task_id', 'result', 'error'] as const;

/** Recorded as soon as the upstream names the task its first call created, for a run after a crash. */
export async function recordUpstreamTask(
  deps: ClaimDeps,
  taskKey: string,
  upstreamTaskId: string,
): Promise<void> {
  await deps.payloads.put(taskKey, 'upstream_task_id', upstreamTaskId);
}

/**
 * A synchronous answer, recorded as soon as it arrives: the payload the API reads it from, and what a
 * run after a crash answers with instead of sending the call again.
 */
export async function recordAnswer(
  deps: ClaimDeps,
  taskKey: string,
  reply: UpstreamReply,
): Promise<RecordedAnswer> {
  return reply.kind === 'error'
    ? { kind: 'error', ref: await deps.payloads.put(taskKey, 'error', reply.error), error: reply.error }
    : { kind: 'result', ref: await deps.payloads.put(taskKey, 'result', reply.result), result: reply.result };
}

/** The client's tools/call, sent upstream; only failures that certainly preceded delivery are retried. */
export async function sendFirstCall(deps: SendDeps, input: CallUpstreamToolInput): Promise<UpstreamReply> {
  const endpoint = await deps.resolveUpstream(input);
  const request = await requiredPayload<UpstreamCallPayload>(
    deps.payloads,
    { ref: input.call.requestRef, taskKey: input.taskKey, kind: 'request' },
    'The request of this task is no longer stored',
  );
  const ctx = Context.current();
  const send = () =>
    sendToolCall(deps, endpoint, input, request, {
      signal: ctx.cancellationSignal,
      sleep: (ms) => cancellableSleep(ms, ctx.cancellationSignal),
    });
  return deps.firstCalls ? deps.firstCalls.whileSending(input.taskKey, send) : send();
}

/**
 * A task-aware tools/call sent upstream, declaring the gateway's own capabilities: by the worker's
 * first-call activity, or by the API itself (src/gateway/first-call.ts). Failures that certainly preceded
 * delivery are retried (any failure, for idempotent tools); a bound passed becomes the error answer;
 * anything else throws an ApplicationFailure saying whether the call may have reached the upstream.
 */
export async function sendToolCall(
  deps: Pick<SendDeps, 'upstream' | 'gatewayInfo'>,
  endpoint: UpstreamEndpoint,
  input: { upstream: string; call: UpstreamCallRequest },
  request: UpstreamCallPayload,
  opts: { signal?: AbortSignal; sleep: (ms: number) => Promise<void> },
): Promise<UpstreamReply> {
  const { call } = input;
  const params = toolCallParams(
    call.tool,
    request,
    upstreamMeta({
      relayedMeta: request.relayedMeta,
      protocolVersion: call.protocolVersion,
      capabilities: taskPathCapabilities(call.elicitationForm),
      gatewayInfo: deps.gatewayInfo,
    }),
  );
  return sendRetryingUndelivered(
    () =>
      deps.upstream.send(endpoint, METHOD.toolsCall, params, {
        ...(opts.signal && { signal: opts.signal }),
        ...(request.headers && { headers: request.headers }),
      }),
    {
      upstream: input.upstream,
      repeatDelivered: call.idempotent,
      notRepeatedBecause: 'because the tool is not idempotent',
      sleep: opts.sleep,
    },
  );
}
