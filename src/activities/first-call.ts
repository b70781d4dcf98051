/**
 * The last word before a task's first upstream call is sent (the call itself is in index.ts). The claim
 * in the store (store/first-calls.ts) decides, not the clock alone: the first call is a local activity,
 * which runs again when its worker dies before the workflow task completes, by then often past the start
 * deadline. Only the store knows whether the earlier run had already sent the call and, once the
 * upstream answered with a task, which one (recorded before anything else), so the task is taken up
 * instead of being reported as never sent while it runs upstream.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { FirstCalls } from '../store/first-calls';
import type { PayloadStore } from '../store/payload-store';
import type { CallUpstreamToolInput } from './types';

/** Failure types the workflow's retry policies refer to. */
export const FAILURE = {
  /** The first tools/call may have reached the upstream; re-sending could repeat a side effect. */
  callOutcomeUnknown: 'UpstreamCallOutcomeUnknown',
  /** The task did not start before its deadline (the client was told so): nothing is sent. */
  notStarted: 'TaskNotStarted',
  upstreamUnreachable: 'UpstreamUnreachable',
  upstreamProtocol: 'UpstreamProtocolViolation',
} as const;

/** Send the call now, or take up the upstream task an earlier run of the activity created. */
export type FirstCallClaim = { send: true } | { send: false; upstreamTaskId: string };

interface ClaimDeps {
  /** Absent in unit tests: then only the deadline counts. */
  firstCalls?: FirstCalls;
  payloads: PayloadStore;
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
 * run's: its recorded upstream task is taken up; without one the call may have been sent, and it is sent
 * again only for idempotent tools.
 */
export async function claimFirstCall(deps: ClaimDeps, input: CallUpstreamToolInput): Promise<FirstCallClaim> {
  const late = input.startDeadline !== undefined && Date.now() > Date.parse(input.startDeadline);
  const claim = await deps.firstCalls?.claim(input.taskKey, late ? 'abandoned' : 'sending');
  if (!claim || claim.won) {
    if (late) throw notStarted();
    return { send: true };
  }
  if (claim.state === 'abandoned') throw notStarted();
  const upstreamTaskId = await deps.payloads.firstOf<string>(input.taskKey, 'upstream_task_id');
  if (upstreamTaskId !== undefined) return { send: false, upstreamTaskId };
  if (input.call.idempotent) return { send: true };
  throw ApplicationFailure.create({
    message: `The call to upstream "${input.upstream}" may already have been sent; it was not repeated because the tool is not idempotent`,
    type: FAILURE.callOutcomeUnknown,
    nonRetryable: true,
  });
}

/** Recorded as soon as the upstream names the task its first call created, for a run after a crash. */
export async function recordUpstreamTask(
  deps: ClaimDeps,
  taskKey: string,
  upstreamTaskId: string,
): Promise<void> {
  await deps.payloads.put(taskKey, 'upstream_task_id', upstreamTaskId);
}
