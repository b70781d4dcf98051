/**
 * One workflow per task. Started with update-with-start (`tasks.firstCallFrom: worker`), it makes the
 * upstream call and answers the start update with the first outcome; started by the API for a task the
 * API's own first call created and recorded (`carried` input, src/temporal/first-call.ts), it begins
 * at the watch. Either way it then owns the upstream task until it is terminal: a watch activity polls the upstream,
 * signals for input and cancellation interrupt it, every change is recorded in the store, and the run
 * continues as new when the server suggests it so history stays bounded however long the task runs.
 */
import {
  ActivityFailure,
  allHandlersFinished,
  ActivityCancellationType,
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  setCurrentDetails,
  workflowInfo,
} from '@temporalio/workflow';
import type { TaskActivities } from '../activities';
import type { UpstreamTaskRef, WatchUpstreamTaskResult } from '../activities/types';
import type { JsonRpcErrorObject } from '../protocol';
import type {
  CancelOutcome,
  FirstOutcome,
  InputSignal,
  TaskObservation,
  TaskWorkflowInput,
  TaskWorkflowResult,
} from './messages';
import { cancelTaskUpdate, provideInputSignal, snapshotQuery, startTaskUpdate, taskRowOf } from './messages';
import { HubWatch } from './hub-watch';
import { accessOf, publishStatus, statusDetails } from './published-status';
import { TaskState } from './task-state';
import { refOf, watchInputOf } from './watch-input';

/** Non-idempotent tools: one attempt; the activity itself retries only undelivered requests. */
const { callUpstreamTool } = proxyActivities<TaskActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 1 },
});
const idempotentCall = proxyActivities<TaskActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 3, initialInterval: '1s' },
});
/**
 * The first call as a local activity: no activity task round trip through the server, so the client's
 * answer comes sooner. A local activity can run again after a worker crash; the activity claims the call
 * in the store before sending (store/tasks/first-calls.ts), so a second run never sends it twice.
 */
const localFirstCall = proxyLocalActivities<TaskActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 1 },
});
const localIdempotentCall = proxyLocalActivities<TaskActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 3, initialInterval: '1s' },
});
/** Workflows started before the first call became a local activity replay with the activity. */
const LOCAL_FIRST_CALL = 'first-call-local-activity';
/** Workflows started before the start deadline was judged by the first call's claim replay their own check. */
const DEADLINE_BY_CLAIM = 'first-call-deadline-by-claim';
/** Workflows whose first call failed before such a failure settled a task already recorded replay without it. */
const SETTLE_RECORDED = 'first-call-error-settles-recorded-task';
/**
 * Runs from before the poll's record of an end was trusted record it again (a local activity that
 * changes nothing): they replay with it.
 */
const POLL_RECORDED_END = 'poll-recorded-end';
/** Long-lived poller: heartbeats detect a lost worker within seconds; TRY_CANCEL lets signals preempt it. */
const { watchUpstreamTask } = proxyActivities<TaskActivities>({
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '5 seconds',
  cancellationType: ActivityCancellationType.TRY_CANCEL,
  retry: { initialInterval: '1s', maximumInterval: '30s' },
});
const { sendTaskInput, cancelUpstreamTask } = proxyActivities<TaskActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 20 },
});
const { recordTaskCreated, recordTaskSnapshot } = proxyLocalActivities<TaskActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200ms', maximumInterval: '10s' },
});

export async function taskWorkflow(input: TaskWorkflowInput): Promise<TaskWorkflowResult> {
  let state: TaskState | undefined = input.carried ? new TaskState(input.carried) : undefined;
  let first: FirstOutcome | undefined = state ? { kind: 'task', observation: state.present() } : undefined;
  // Current details belong to a run: a continued run states the status again.
  if (state) setCurrentDetails(statusDetails(state.present().status));

  setHandler(startTaskUpdate, async () => {
    await condition(() => first !== undefined);
    return first as FirstOutcome;
  });
  // Answers before the task's state exists here can only be to a record the crashed attempt of this
  // workflow task wrote (the signal is then handled before the first call is run again): kept for the
  // state, if the gateway's record showed them open. Older signals carry no `open` and are not kept.
  let early: InputSignal[] = [];
  setHandler(provideInputSignal, (responses) => {
    if (state) state.acceptInput(responses);
    else if (responses.open?.length) early.push(responses);
  });
  setHandler(snapshotQuery, () => state?.present() ?? null);
  // Runs beside the main loop: the client's ack waits for the upstream's answer to tasks/cancel.
  setHandler(cancelTaskUpdate, async (): Promise<CancelOutcome> => {
    if (!state || state.terminal || state.s.cancelSent) return { ok: true };
    try {
      const result = await cancelUpstreamTask(refOf(input, state));
      if (result.ok) state.s.cancelSent = true;
      return result;
    } catch (err) {
      const cause = (err as ActivityFailure).cause;
      const message = cause instanceof Error ? cause.message : 'The upstream could not be asked to cancel';
      return { ok: false, error: { code: -32603, message } };
    }
  });

  if (!state) {
    const outcome = await firstCall(input);
    if (outcome.kind !== 'task') {
      // The gateway's own failure of a first call run again after a crash (its worker died inside this
      // workflow task) may find the task recorded by the attempt that died: it ends failed there too,
      // never `working` forever under a completed workflow. Without such a record this changes nothing.
      if (outcome.kind === 'error' && 'error' in outcome && patched(SETTLE_RECORDED)) {
        await recordTaskSnapshot({
          taskKey: input.taskKey,
          observation: failedObservation(startObservation(input), outcome.error),
          project: input.projectSlug,
        });
      }
      first = outcome;
      await condition(allHandlersFinished);
      return { outcome: outcome.kind };
    }
    state = new TaskState({
      upstreamTaskId: outcome.upstreamTaskId,
      observed: { ...outcome.observation, createdAt: input.createdAt },
      answeredKeys: [],
      pendingInputs: [],
      cancelSent: false,
    });
    for (const responses of early) state.acceptInput(responses);
    early = [];
    // Durable before return: the client learns the task id only after its record exists.
    await recordTaskCreated({ ...taskRowOf(input, workflowInfo().workflowId), observation: state.present() });
    publishStatus(state.present().status);
    first = { kind: 'task', observation: state.present() };
  }

  const ref = refOf(input, state);
  // Polled by the workers' watch hub instead of a watch activity (decided at creation; hub-watch.ts).
  const hub =
    input.watchBy === 'hub'
      ? new HubWatch(input.maxWatchMs, input.createdEnlistment?.adoptBefore)
      : undefined;
  // The create result may already ask for input the client cannot give.
  if (state.unsupportedInputs(input.call.elicitationForm).length > 0) {
    await apply(state, input, { kind: 'changed', observation: state.s.observed });
  }
  while (!state.terminal) {
    for (let inputs = state.s.pendingInputs.shift(); inputs; inputs = state.s.pendingInputs.shift()) {
      await sendTaskInput({ ...ref, taskKey: input.taskKey, ref: inputs.ref, keys: inputs.keys });
    }
    const watched = hub
      ? await hub.watch(state, watchInputOf(state, ref, input))
      : await watchUntilChangeOrWork(state, ref, input);
    if (watched) await apply(state, input, watched);
    if (!state.terminal && workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof taskWorkflow>({ ...input, carried: state.s });
    }
  }
  await hub?.end(input.taskKey);
  await condition(allHandlersFinished);
  return { outcome: 'task', status: state.s.observed.status };
}

async function firstCall(input: TaskWorkflowInput) {
  // The start deadline is the activity's to judge, with the claim in the store: the workflow task that
  // runs this after a worker crash is late, yet the crashed run may have sent the call and recorded the
  // task it created (activities/first-call.ts). Runs from before this replay their own check, which
  // took the workflow time of this run's first task for the start.
  if (
    !patched(DEADLINE_BY_CLAIM) &&
    input.startDeadline !== undefined &&
    Date.now() > Date.parse(input.startDeadline)
  ) {
    return { kind: 'error', error: NOT_STARTED } as const;
  }
  const local = patched(LOCAL_FIRST_CALL);
  const call = input.call.idempotent
    ? (local ? localIdempotentCall : idempotentCall).callUpstreamTool
    : local
      ? localFirstCall.callUpstreamTool
      : callUpstreamTool;
  try {
    return await call({
      ...accessOf(input),
      taskKey: input.taskKey,
      call: input.call,
      ...(input.startDeadline !== undefined && { startDeadline: input.startDeadline }),
    });
  } catch (err) {
    // A local activity's failure comes as it was thrown; an activity's is wrapped in an ActivityFailure.
    const cause = err instanceof ActivityFailure ? err.cause : err;
    const message = cause instanceof Error ? cause.message : `Upstream "${input.upstream}" call failed`;
    return { kind: 'error', error: { code: -32603, message } } as const;
  }
}

/** Runs one watch, cutting it short as soon as there is input to forward. */
async function watchUntilChangeOrWork(
  state: TaskState,
  ref: UpstreamTaskRef,
  input: TaskWorkflowInput,
): Promise<WatchUpstreamTaskResult | undefined> {
  const scope = new CancellationScope();
  let settled: { value?: WatchUpstreamTaskResult; error?: unknown } | undefined;
  scope
    .run(() => watchUpstreamTask(watchInputOf(state, ref, input)))
    .then(
      (value) => (settled = { value }),
      (error: unknown) => (settled = { error }),
    );
  await condition(() => settled !== undefined || state.hasWork);
  if (!settled) {
    scope.cancel();
    return undefined;
  }
  if (settled.error !== undefined) {
    if (isCancellation(settled.error)) return undefined;
    throw settled.error;
  }
  return settled.value;
}

async function apply(
  state: TaskState,
  input: TaskWorkflowInput,
  watched: WatchUpstreamTaskResult,
): Promise<void> {
  const before = state.present();
  const ref = refOf(input, state);
  if (watched.kind === 'unchanged') return;
  if (watched.kind === 'changed') {
    state.observe(watched.observation);
    const unsupported = state.unsupportedInputs(input.call.elicitationForm);
    if (unsupported.length > 0) {
      // The client could never answer these through tasks/update: end the task now rather than let it hang.
      await cancelUpstreamTask(ref);
      state.observe(
        failedObservation(state.s.observed, {
          code: -32603,
          message: `The upstream asked for input the gateway cannot relay through a task (${unsupported.join(', ')}); the upstream task was cancelled`,
          data: { unsupportedInputRequests: unsupported },
        }),
      );
    }
  } else if (watched.kind === 'expired') {
    await cancelUpstreamTask(ref);
    state.observe(
      failedObservation(state.s.observed, {
        code: -32603,
        message:
          'The task reached the end of its time to live before it finished; the upstream task was cancelled',
      }),
    );
  } else if (watched.kind === 'failed') {
    state.observe(failedObservation(state.s.observed, watched.error));
  } else {
    state.observe(
      failedObservation(state.s.observed, {
        code: -32603,
        message:
          watched.kind === 'lost'
            ? 'The upstream server no longer knows this task'
            : `The upstream server stayed unreachable: ${watched.message}`,
      }),
    );
  }
  const after = state.present();
  // An end the poll recorded itself, as observed (no failure of the gateway's own replaced it): the
  // store has it as this record would write it, so the end costs no local activity and one workflow
  // task fewer (a burst of tasks ending together is absorbed sooner).
  const recordedByPoll =
    watched.kind === 'changed' &&
    watched.recorded === true &&
    after.status === watched.observation.status &&
    patched(POLL_RECORDED_END);
  if (!recordedByPoll) {
    await recordTaskSnapshot({ taskKey: input.taskKey, observation: after, project: input.projectSlug });
  }
  if (after.status !== before.status) publishStatus(after.status);
}

const NOT_STARTED = {
  code: -32603,
  message: 'The task did not start before its deadline; nothing was sent to the upstream',
};

/** The task as it stood when created, before anything was observed (the base of a failure at its start). */
function startObservation(input: TaskWorkflowInput): TaskObservation {
  return {
    status: 'working',
    createdAt: input.createdAt,
    lastUpdatedAt: input.createdAt,
    ttlMs: null,
    key: '',
  };
}

/** A terminal failure decided by the gateway (the upstream forgot the task, expired, or asked the impossible). */
function failedObservation(o: TaskObservation, error: JsonRpcErrorObject): TaskObservation {
  return {
    status: 'failed',
    createdAt: o.createdAt,
    lastUpdatedAt: new Date(Date.now()).toISOString(),
    ttlMs: o.ttlMs,
    ...(o.pollIntervalMs !== undefined && { pollIntervalMs: o.pollIntervalMs }),
    key: 'gateway-failed',
    gatewayError: error,
  };
}
