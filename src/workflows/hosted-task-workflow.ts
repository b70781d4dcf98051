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
  patched,
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
  InputSignal,
  TaskObservation,
  TaskWorkflowInput,
  TaskWorkflowResult,
} from './messages';
import { cancelTaskUpdate, provideInputSignal, snapshotQuery, startTaskUpdate } from './messages';
import { approvalGate } from './approval-gate';
import { hostedSlot, QUEUE_WITHOUT_ACTIVITY_SLOT } from './hosted-slot';
import { accessOf, publishStatus } from './published-status';
import { unsupportedInputs } from './task-state';

const { startHostedTask, recordHostedStatus, recordTaskSnapshot, releaseHostedSlot } =
  proxyLocalActivities<TaskActivities>({
    startToCloseTimeout: '10 seconds',
    retry: { initialInterval: '200ms', maximumInterval: '10s' },
  });
/**
 * The call: heartbeats find a lost worker within 30 s (a loaded machine may stall a heartbeat for
 * seconds; a call wrongly taken for lost would fail or repeat), and the next attempt decides from the store
 * whether the call may be sent again (activities/hosted-call.ts). The upstream client's own deadline
 * (restarted by each progress notification) bounds one attempt.
 */
const { callHostedTool } = proxyActivities<TaskActivities>({
  startToCloseTimeout: '24 hours',
  heartbeatTimeout: '30 seconds',
  cancellationType: ActivityCancellationType.TRY_CANCEL,
  retry: { initialInterval: '1s', maximumInterval: '10s', maximumAttempts: 5 },
});
/**
 * Histories from before the queue waited in the workflow (hosted-slot.ts): waiting for a slot of the
 * upstream's queue in an activity, as long as it takes, on any worker.
 */
const { waitForHostedSlot } = proxyActivities<TaskActivities>({
  startToCloseTimeout: '30 days',
  heartbeatTimeout: '30 seconds',
  cancellationType: ActivityCancellationType.TRY_CANCEL,
  retry: { initialInterval: '1s', maximumInterval: '10s' },
});

type Settled = { value: CallHostedToolResult } | { error: unknown };

/** A hosted task that waits for approval before anything is sent (APPROVAL_TASK_WORKFLOW_TYPE). */
export async function approvalTaskWorkflow(input: TaskWorkflowInput): Promise<TaskWorkflowResult> {
  if (!input.approval) throw new Error('An approval task needs its approval gate');
  return hostedTaskWorkflow(input);
}

export async function hostedTaskWorkflow(input: TaskWorkflowInput): Promise<TaskWorkflowResult> {
  const hosted = input.hosted ?? { promoteAfterMs: 0, repeatable: false };
  let first: FirstOutcome | undefined;
  let observation: TaskObservation | undefined;
  let ended = false;
  let cancelRequested = false;
  /** While the upstream asks for input: the keys still open and the answers' payloads so far. */
  let asking: { open: Set<string>; answers: string[] } | undefined;
  /**
   * Answers that came while no question was open here, to questions the gateway's record showed open
   * (`open`): the record is written before a crashed workflow task is run again, and the signal can then
   * be handled before the question is. Taken when the question is; signals without `open` (older ones)
   * are never kept, so older histories replay as they ran.
   */
  let early: InputSignal[] = [];

  setHandler(startTaskUpdate, async () => {
    await condition(() => first !== undefined);
    return first as FirstOutcome;
  });
  setHandler(snapshotQuery, () => (observation ? present(observation, asking) : null));
  // Answers count only for questions still open; the call goes on once every one is answered.
  const take = ({ ref, keys }: InputSignal, only?: string[]) => {
    const taken = keys.filter((k) => (!only || only.includes(k)) && asking?.open.delete(k));
    if (taken.length > 0) asking?.answers.push(ref);
  };
  setHandler(provideInputSignal, (signal) => {
    if (asking) take(signal);
    else if (signal.open?.length) early.push(signal);
  });
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

  // A call that needs approval is a task at once; nothing is sent before the verdict (approval-gate.ts).
  if (input.approval) {
    const waiting = observation;
    const verdict = await approvalGate(
      input,
      input.approval,
      () => cancelRequested,
      () => (first = { kind: 'task', observation: waiting }),
    );
    observation = await recordHostedStatus({
      ...task,
      status: verdict.kind === 'approved' ? 'working' : verdict.status,
      statusMessage: verdict.message,
      createdAt: input.createdAt,
      ...(verdict.kind === 'refused' && verdict.error && { error: verdict.error }),
    });
    if (verdict.kind === 'refused') {
      ended = true;
      publishStatus(observation.status);
      await condition(allHandlersFinished);
      return { outcome: 'task', status: observation.status };
    }
  }

  const queue =
    hosted.maxConcurrent !== undefined && hosted.upstreamId !== undefined
      ? {
          taskKey: input.taskKey,
          upstreamId: hosted.upstreamId,
          upstream: input.upstream,
          maxConcurrent: hosted.maxConcurrent,
          createdAt: input.createdAt,
        }
      : undefined;
  // Queued in the workflow, holding no activity slot, and the slot lent while the upstream asks.
  const slot = queue && patched(QUEUE_WITHOUT_ACTIVITY_SLOT) ? hostedSlot(queue) : undefined;
  let settled: Settled | undefined;
  let scope = new CancellationScope();
  /** One exchange of the call: the call itself (round 0, after its slot), or a retry with answers. */
  const run = (round: number, retry?: { requestRef: string; answers: string[] }) => {
    settled = undefined;
    scope = new CancellationScope();
    scope
      .run(async () => {
        if (slot) await slot.take(retry?.requestRef ?? input.call.requestRef);
        else if (queue && round === 0) await waitForHostedSlot(queue);
        return callHostedTool({
          ...accessOf(input),
          taskKey: input.taskKey,
          call: input.call,
          createdAt: input.createdAt,
          repeatable: hosted.repeatable,
          ...(hosted.callDeadlineMs !== undefined && { callDeadlineMs: hosted.callDeadlineMs }),
          round,
          ...(retry && { roundRequestRef: retry.requestRef, answers: retry.answers }),
        });
      })
      .then(
        (value) => (settled = { value }),
        (error: unknown) => (settled = { error }),
      );
  };
  run(0);

  // A 2025 client that asked for a task gets one at once; others may get the answer itself.
  const window = input.call.forceTask || first ? 0 : hosted.promoteAfterMs;
  if (window > 0) await condition(() => settled !== undefined || cancelRequested, window);
  const answered = settled as Settled | undefined;
  if (!first && answered && !cancelRequested && !isCancellationOf(answered) && !isQuestion(answered)) {
    observation = await finish(answered);
    first = answerOf(answered, input);
  } else {
    first ??= { kind: 'task', observation };
    for (let round = 1; ; round++) {
      await condition(() => settled !== undefined || cancelRequested);
      const s = settled as Settled | undefined;
      if (cancelRequested && (!s || isCancellationOf(s) || isQuestion(s))) {
        scope.cancel();
        observation = await cancelled();
        break;
      }
      if (!s || !isQuestion(s)) {
        if (s) observation = await finish(s);
        break;
      }
      // The upstream asks: the task is input_required until the client answers every question.
      const question = s.value;
      observation = question.observation;
      await recordTaskSnapshot({ ...task, observation });
      publishStatus('input_required');
      const unsupported = unsupportedInputs(observation, input.call.elicitationForm);
      if (unsupported.length > 0) {
        observation = await recordHostedStatus({
          ...task,
          status: 'failed',
          statusMessage: `The upstream asked for input the gateway cannot relay through a task (${unsupported.join(', ')}); the call ended`,
          createdAt: input.createdAt,
          error: {
            code: -32603,
            message: `The upstream asked for input the gateway cannot relay through a task (${unsupported.join(', ')}); the call ended`,
          },
        });
        break;
      }
      // The client may take its time: the upstream's slot goes to the next call meanwhile.
      await slot?.lend();
      asking = { open: new Set(Object.keys(observation.inputs ?? {})), answers: [] };
      for (const signal of early) take(signal, signal.open);
      early = [];
      await condition(() => cancelRequested || (asking?.open.size ?? 0) === 0);
      if (cancelRequested) {
        observation = await cancelled();
        break;
      }
      const answers = asking.answers;
      asking = undefined;
      publishStatus('working');
      run(round, { requestRef: question.nextRequestRef, answers });
    }
  }
  // The slot goes to the next call once this one is over, whichever way it ended.
  if (slot) await slot.release();
  else if (queue) await releaseHostedSlot({ taskKey: input.taskKey });
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

  function cancelled(): Promise<TaskObservation> {
    return recordHostedStatus({
      ...task,
      status: 'cancelled',
      statusMessage: 'Cancelled by the client; the upstream call was aborted',
      createdAt: input.createdAt,
    });
  }
}

type Question = Extract<CallHostedToolResult, { kind: 'input' }>;

function isQuestion(s: Settled): s is { value: Question } {
  return 'value' in s && s.value.kind === 'input';
}

/** The observation as the client should see it: questions already answered left out. */
function present(o: TaskObservation, asking: { open: Set<string> } | undefined): TaskObservation {
  if (o.status !== 'input_required' || !asking || !o.inputs) return o;
  return { ...o, inputs: Object.fromEntries(Object.entries(o.inputs).filter(([k]) => asking.open.has(k))) };
}

function isCancellationOf(s: Settled): boolean {
  return 'error' in s && isCancellation(s.error);
}

/** The call's answer as the start update's outcome (within the window): the result, or the error. */
function answerOf(s: Settled, input: TaskWorkflowInput): FirstOutcome {
  if ('value' in s && s.value.kind === 'result') return { kind: 'result', resultRef: s.value.resultRef };
  if ('value' in s && s.value.kind === 'error') return { kind: 'error', errorRef: s.value.errorRef };
  const error: JsonRpcErrorObject = {
    code: -32603,
    message: 'error' in s ? failureMessage(s.error, input) : 'The hosted call failed',
  };
  return { kind: 'error', error };
}

function failureMessage(err: unknown, input: TaskWorkflowInput): string {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof Error && cause.message
    ? cause.message
    : `The hosted call to upstream "${input.upstream}" failed`;
}
