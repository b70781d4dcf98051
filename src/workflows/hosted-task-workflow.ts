/**
 * One workflow per hosted task (docs/hosted-tasks.md): the gateway runs an ordinary upstream tool call as
 * its own task. Started with update-with-start: the task is recorded `working` first, then the call runs
 * in an activity; the start update answers with the call's own answer if it comes within the promotion
 * window (`hosted.promoteAfterMs`), else with the task, which the call's answer completes later. A
 * client's `tasks/cancel` cancels the activity (the upstream request is aborted) and ends the task
 * `cancelled`.
 */
import {
  ActivityCancellationType,
  ActivityFailure,
  allHandlersFinished,
  CancellationScope,
  condition,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { TaskActivities } from '../activities';
import type { CallHostedToolResult } from '../activities/types';
import type { JsonRpcErrorObject } from '../protocol';
import type {
  CancelOutcome,
  FirstOutcome,
  TaskObservation,
  TaskWorkflowInput,
  TaskWorkflowResult,
} from './messages';
import { cancelTaskUpdate, provideInputSignal, snapshotQuery, startTaskUpdate } from './messages';
import { accessOf, publishStatus } from './published-status';

const { startHostedTask, recordHostedStatus, recordTaskSnapshot, releaseHostedSlot } =
  proxyLocalActivities<TaskActivities>({
    startToCloseTimeout: '10 seconds',
    retry: { initialInterval: '200ms', maximumInterval: '10s' },
  });
/**
 * The call: heartbeats find a lost worker within seconds, and the next attempt decides from the store
 * whether the call may be sent again (activities/hosted-call.ts). The upstream client's own deadline
 * (restarted by each progress notification) bounds one attempt.
 */
const { callHostedTool } = proxyActivities<TaskActivities>({
  startToCloseTimeout: '24 hours',
  heartbeatTimeout: '5 seconds',
  cancellationType: ActivityCancellationType.TRY_CANCEL,
  retry: { initialInterval: '1s', maximumInterval: '10s', maximumAttempts: 5 },
});
/** Waiting for a slot of the upstream's queue: as long as it takes, on any worker. */
const { waitForHostedSlot } = proxyActivities<TaskActivities>({
  startToCloseTimeout: '30 days',
  heartbeatTimeout: '5 seconds',
  cancellationType: ActivityCancellationType.TRY_CANCEL,
  retry: { initialInterval: '1s', maximumInterval: '10s' },
});

type Settled = { value: CallHostedToolResult } | { error: unknown };

export async function hostedTaskWorkflow(input: TaskWorkflowInput): Promise<TaskWorkflowResult> {
  const hosted = input.hosted ?? { promoteAfterMs: 0, repeatable: false };
  let first: FirstOutcome | undefined;
  let observation: TaskObservation | undefined;
  let ended = false;
  let cancelRequested = false;

  setHandler(startTaskUpdate, async () => {
    await condition(() => first !== undefined);
    return first as FirstOutcome;
  });
  setHandler(snapshotQuery, () => observation ?? null);
  // A hosted call asks the client for nothing (no input requests are relayed to its upstream yet).
  setHandler(provideInputSignal, () => undefined);
  setHandler(cancelTaskUpdate, async (): Promise<CancelOutcome> => {
    if (!ended) {
      cancelRequested = true;
      await condition(() => ended);
    }
    return { ok: true };
  });

  const task = { taskKey: input.taskKey, project: input.projectSlug };
  try {
    observation = await startHostedTask({
      ...accessOf(input),
      taskKey: input.taskKey,
      call: input.call,
      workflowId: workflowInfo().workflowId,
      caller: input.caller,
      createdAt: input.createdAt,
      ...(input.startDeadline !== undefined && { startDeadline: input.startDeadline }),
    });
  } catch (err) {
    first = { kind: 'error', error: { code: -32603, message: failureMessage(err, input) } };
    await condition(allHandlersFinished);
    return { outcome: 'error' };
  }
  publishStatus('working');

  let settled: Settled | undefined;
  const call = new CancellationScope();
  const queued = hosted.maxConcurrent !== undefined && hosted.upstreamId !== undefined;
  call
    .run(async () => {
      if (queued) {
        await waitForHostedSlot({
          taskKey: input.taskKey,
          upstreamId: hosted.upstreamId as string,
          upstream: input.upstream,
          maxConcurrent: hosted.maxConcurrent as number,
          createdAt: input.createdAt,
        });
      }
      return callHostedTool({
        ...accessOf(input),
        taskKey: input.taskKey,
        call: input.call,
        createdAt: input.createdAt,
        repeatable: hosted.repeatable,
        ...(hosted.callDeadlineMs !== undefined && { callDeadlineMs: hosted.callDeadlineMs }),
      });
    })
    .then(
      (value) => (settled = { value }),
      (error: unknown) => (settled = { error }),
    );

  // A 2025 client that asked for a task gets one at once; others may get the answer itself.
  const window = input.call.forceTask ? 0 : hosted.promoteAfterMs;
  if (window > 0) await condition(() => settled !== undefined || cancelRequested, window);
  if (settled && !cancelRequested && !isCancellationOf(settled)) {
    observation = await finish(settled);
    first = answerOf(settled, input);
  } else {
    first = { kind: 'task', observation };
    await condition(() => settled !== undefined || cancelRequested);
    if (cancelRequested && (!settled || isCancellationOf(settled))) {
      call.cancel();
      observation = await recordHostedStatus({
        ...task,
        status: 'cancelled',
        statusMessage: 'Cancelled by the client; the upstream call was aborted',
        createdAt: input.createdAt,
      });
    } else if (settled) {
      observation = await finish(settled);
    }
  }
  // The slot goes to the next call once this one is over, whichever way it ended.
  if (queued) await releaseHostedSlot({ taskKey: input.taskKey });
  ended = true;
  publishStatus(observation.status);
  await condition(allHandlersFinished);
  return { outcome: first.kind, status: observation.status };

  /** Records how the call ended: its answer, or the failure that ended it (interrupted, unreachable). */
  async function finish(s: Settled): Promise<TaskObservation> {
    if ('value' in s) {
      await recordTaskSnapshot({ ...task, observation: s.value.observation });
      return s.value.observation;
    }
    return recordHostedStatus({
      ...task,
      status: 'failed',
      statusMessage: failureMessage(s.error, input),
      createdAt: input.createdAt,
      error: { code: -32603, message: failureMessage(s.error, input) },
    });
  }
}

function isCancellationOf(s: Settled): boolean {
  return 'error' in s && isCancellation(s.error);
}

/** The call's answer as the start update's outcome (within the window): the result, or the error. */
function answerOf(s: Settled, input: TaskWorkflowInput): FirstOutcome {
  if ('value' in s) {
    return s.value.kind === 'result'
      ? { kind: 'result', resultRef: s.value.resultRef }
      : { kind: 'error', errorRef: s.value.errorRef };
  }
  const error: JsonRpcErrorObject = { code: -32603, message: failureMessage(s.error, input) };
  return { kind: 'error', error };
}

function failureMessage(err: unknown, input: TaskWorkflowInput): string {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof Error && cause.message
    ? cause.message
    : `The hosted call to upstream "${input.upstream}" failed`;
}
