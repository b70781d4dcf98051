/**
 * Task activities: all upstream I/O and store writes of the task workflow. Built by a factory so the
 * worker injects real clients and tests can inject their own.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { InputResponses, TaskSnapshot } from '../protocol';
import { CreateTaskResultSchema, METHOD } from '../protocol';
import { watchesRunning } from '../telemetry/metrics';
import type { TaskObservation } from '../workflows/messages';
import type { UpstreamReply } from '../upstream/client';
import type { RecordedAnswer } from '../store/tasks/payload-store';
import { claimFirstCall, recordAnswer, recordUpstreamTask, sendFirstCall } from './first-call';
import { FAILURE } from './failures';
import type { TaskDetail } from './observation';
import type { ActivityDeps } from './deps';
import { createHostedActivities } from './hosted-call';
import { RecentDetails } from './recent-details';
import { createWatchPoll } from './watch-poll';
import { watchEnlistmentOf } from './watch-enlistment';
import { toSnapshot } from './snapshot';
import { control, countTransition, finishedSnapshot, heartbeating, sleepWithHeartbeat } from './support';
import type {
  CallUpstreamToolInput,
  CallUpstreamToolResult,
  ControlResult,
  EnlistWatchInput,
  RecordTaskCreatedInput,
  RecordTaskSnapshotInput,
  SendTaskInputInput,
  UpstreamTaskRef,
  WatchUpstreamTaskInput,
  WatchUpstreamTaskResult,
} from './types';

export type { ActivityDeps, TaskActivitySettings } from './deps';
export { FAILURE } from './failures';

export function createActivities(deps: ActivityDeps) {
  const { settings, logger } = deps;
  // What observe() stored, for the step that records it next (recent-details.ts).
  const recent = deps.recentDetails ?? new RecentDetails();

  // One poll of an upstream task: the watch activity's and the watch hub's (watch-poll.ts).
  const poll = createWatchPoll(deps, recent);
  const { detailOf, observe } = poll;
  const taskRequest = (
    ref: UpstreamTaskRef,
    method: string,
    extra?: Record<string, unknown>,
  ): Promise<UpstreamReply> => poll.taskRequest(ref, method, Context.current().cancellationSignal, extra);

  const invalidTask = (upstream: string) =>
    ApplicationFailure.create({
      message: `Upstream "${upstream}" answered with an invalid task`,
      type: FAILURE.upstreamProtocol,
      nonRetryable: true,
    });

  /** The task the first call created (or an earlier run of it did), as the workflow's first observation. */
  async function firstTask(
    input: CallUpstreamToolInput,
    upstreamTaskId: string,
    created?: Record<string, unknown>,
  ): Promise<CallUpstreamToolResult> {
    const ref: UpstreamTaskRef = {
      project: input.project,
      upstream: input.upstream,
      principal: input.principal,
      authorizationId: input.authorizationId,
      // Bound to the address the task was created against, like every later request of the task.
      ...(input.upstreamAddress !== undefined && { upstreamAddress: input.upstreamAddress }),
      upstreamTaskId,
      protocolVersion: input.call.protocolVersion,
    };
    // A create result may announce a status whose detail (result, error, input requests) only
    // tasks/get carries; reading it is safe to repeat, unlike the call itself.
    const snapshot =
      (created && toSnapshot(created, settings, upstreamTaskId)) ??
      detailOf(await taskRequest(ref, METHOD.tasksGet), upstreamTaskId);
    if (!snapshot) throw invalidTask(input.upstream);
    return { kind: 'task', upstreamTaskId, observation: await observe(input.taskKey, snapshot) };
  }

  /**
   * A synchronous answer (already recorded) as the first outcome: a payload handed back to the API by
   * id, or, when the client asked for a task whatever happens, a task that already ended.
   */
  async function firstAnswer(
    input: CallUpstreamToolInput,
    answer: RecordedAnswer,
  ): Promise<CallUpstreamToolResult> {
    if (input.call.forceTask) {
      const observation = await observe(input.taskKey, finishedSnapshot(answer, settings));
      return { kind: 'task', upstreamTaskId: '', observation };
    }
    return answer.kind === 'error'
      ? { kind: 'error', errorRef: answer.ref }
      : { kind: 'result', resultRef: answer.ref };
  }

  /**
   * The upstream task an earlier run's call created, taken up after a crash. If it cannot be read now,
   * the workflow still takes it up, with the task as last recorded (or as `working`): its watch reads
   * the upstream again, within its failure budget, and records whatever the task became.
   */
  async function resumeTask(
    input: CallUpstreamToolInput,
    upstreamTaskId: string,
  ): Promise<CallUpstreamToolResult> {
    try {
      return await firstTask(input, upstreamTaskId);
    } catch (err) {
      if (Context.current().cancellationSignal.aborted) throw err;
      logger.warn({ upstream: input.upstream, err: errorMessage(err) }, 'resumed task not readable yet');
      const now = new Date().toISOString();
      const recorded = await deps.store.getTask(input.taskKey);
      const snapshot = recorded?.snapshot ?? {
        status: 'working',
        createdAt: now,
        lastUpdatedAt: now,
        ttlMs: null,
      };
      return { kind: 'task', upstreamTaskId, observation: await observe(input.taskKey, snapshot) };
    }
  }

  /**
   * The claim of a first call whose outcome is known moves on from `sending`, to the states the API path
   * uses (docs/decisions.md, "The first call from the API"): `done` once the upstream answered without a
   * task (its answer recorded) or the call failed (the client hears why), `started` once the task it
   * created is recorded. The sweep for lost claims then never sees it. A failed write is logged, not
   * thrown: the outcome stands, and the reconciler settles the claim `done` when an answer is recorded.
   */
  const settle = async (taskKey: string, to: 'done' | 'started'): Promise<void> => {
    await deps.firstCalls
      ?.move(taskKey, 'sending', to)
      .catch((err: unknown) => logger.warn({ err: errorMessage(err) }, 'first call claim not settled'));
  };

  /**
   * Sends the first call and records the answer first thing. A synchronous answer settles the claim
   * `done`; a task's claim is settled `started` when the task is recorded (recordTaskCreated).
   */
  async function sendAndRecord(input: CallUpstreamToolInput): Promise<CallUpstreamToolResult> {
    const reply = await sendFirstCall(deps, input);
    if (reply.kind === 'result' && reply.result.resultType === 'task') {
      const created = CreateTaskResultSchema.safeParse(reply.result);
      if (!created.success) throw invalidTask(input.upstream);
      await recordUpstreamTask(deps, input.taskKey, created.data.taskId);
      return firstTask(input, created.data.taskId, created.data);
    }
    const answer = await recordAnswer(deps, input.taskKey, reply);
    await settle(input.taskKey, 'done');
    return firstAnswer(input, answer);
  }

  return {
    ...createHostedActivities(deps),
    /**
     * Sends the client's tools/call upstream, declaring the gateway's own capabilities. Sent at most once
     * unless the tool is idempotent: only errors that certainly preceded delivery are retried here, and
     * the workflow gives this activity a single attempt. The upstream's answer is recorded before
     * anything else, so a run after a crash takes it up (first-call.ts) instead of sending again.
     */
    async callUpstreamTool(input: CallUpstreamToolInput): Promise<CallUpstreamToolResult> {
      const claim = await claimFirstCall(deps, input);
      if (!claim.send) {
        if ('upstreamTaskId' in claim) return resumeTask(input, claim.upstreamTaskId);
        // The run that recorded this answer may have died before settling its claim.
        await settle(input.taskKey, 'done');
        return firstAnswer(input, claim.answer);
      }
      try {
        return await sendAndRecord(input);
      } catch (err) {
        // A failure the client hears (not delivered, outcome unknown, an invalid task) ends the call, as
        // on the API path. A cancelled run (its worker stopping) is left to the run after it.
        if (!Context.current().cancellationSignal.aborted) await settle(input.taskKey, 'done');
        throw err;
      }
    },

    /**
     * Polls the upstream's tasks/get until the observation changes, the watch time is up, or the
     * workflow cancels it (to forward input or a cancel). Looping here instead of in the workflow keeps
     * history independent of the number of polls; heartbeats carry cancellation and detect lost workers.
     * An unchanged observation counts as changed once the stored detail is due for a refresh.
     */
    async watchUpstreamTask(input: WatchUpstreamTaskInput): Promise<WatchUpstreamTaskResult> {
      watchesRunning.inc();
      try {
        // Polled again from now on; until the next watch starts, the task is due (store/tasks/task-watch.ts).
        await deps.store.watchStarted(input.taskKey);
        const watched = await watch(input);
        // The workflow starts the next watch; a change marks the task due when it is recorded.
        if (watched.kind === 'unchanged') await deps.store.watchDue(input.taskKey);
        return watched;
      } finally {
        watchesRunning.dec();
      }
    },

    /**
     * Hands the task's polling to the watch hub (a local activity of a workflow in hub mode): its row,
     * due now, with what a poll needs and the enlistment's generation; a hub holding an older row of it
     * drops that at its next lease renewal.
     */
    async enlistWatch(input: EnlistWatchInput): Promise<void> {
      await hubOf(deps).enlist(watchEnlistmentOf(input));
      deps.watchEnlisted?.();
    },

    /** The task ended: no hub polls it any more. */
    async delistWatch(input: { taskKey: string }): Promise<void> {
      await hubOf(deps).delist(input.taskKey);
    },

    /** Forwards input responses; tasks/update is idempotent upstream (answered keys are ignored). */
    async sendTaskInput(input: SendTaskInputInput): Promise<ControlResult> {
      const answers = await deps.payloads.get<InputResponses>(input.ref, input.taskKey, 'input_responses');
      // Answers past payload retention cannot be forwarded; the upstream keeps asking, the client sees it.
      if (!answers)
        return { ok: false, error: { code: -32602, message: 'The answers are no longer stored' } };
      const inputResponses = Object.fromEntries(
        Object.entries(answers).filter(([k]) => input.keys.includes(k)),
      );
      return control(await taskRequest(input, METHOD.tasksUpdate, { inputResponses }));
    },

    /** Asks the upstream to cancel; cancellation is cooperative and idempotent upstream. */
    async cancelUpstreamTask(input: UpstreamTaskRef): Promise<ControlResult> {
      return control(await taskRequest(input, METHOD.tasksCancel));
    },

    /**
     * Records a new task (before its id is returned to the client), with its detail from the payload. A
     * task already recorded was recorded by an earlier attempt of the first workflow task, whose worker
     * died before the attempt completed: this attempt's observation is the newer one (perhaps already
     * terminal, when nothing else would record it), so it is recorded as a change.
     */
    async recordTaskCreated(input: RecordTaskCreatedInput): Promise<void> {
      const { observation, ...task } = input;
      const snapshot = await snapshotOf(input.taskKey, observation);
      if (!(await deps.store.insertTask({ ...task, snapshot }))) {
        await deps.store.recordSnapshot(input.taskKey, snapshot);
      }
      // The task is recorded and its workflow runs: the first call's claim is settled as the API's is.
      await settle(input.taskKey, 'started');
    },

    async recordTaskSnapshot(input: RecordTaskSnapshotInput): Promise<void> {
      const recorded = await deps.store.recordSnapshot(
        input.taskKey,
        await snapshotOf(input.taskKey, input.observation),
      );
      const status = input.observation.status;
      if (recorded) countTransition(input.project ?? 'unknown', status);
    },
  };

  /** The watch itself (see watchUpstreamTask): polls in one activity, heartbeating. */
  async function watch(input: WatchUpstreamTaskInput): Promise<WatchUpstreamTaskResult> {
    const ctx = Context.current();
    const started = Date.now();
    const cursor = await poll.startCursor(input);
    for (;;) {
      if (deps.stopping?.aborted) return { kind: 'unchanged' };
      ctx.heartbeat();
      const step = await poll.pollOnce(input, cursor, ctx.cancellationSignal, heartbeating);
      if ('done' in step) return step.done;
      if (!step.failed && Date.now() - started >= settings.maxWatchMs) return { kind: 'unchanged' };
      await sleepWithHeartbeat(step.againMs, deps.stopping);
    }
  }

  /** The full snapshot behind an observation, for the store (the gateway's own failures carry no payload). */
  async function snapshotOf(taskKey: string, o: TaskObservation): Promise<TaskSnapshot> {
    const { key: _key, detailRef, inputs: _inputs, gatewayError, ...fields } = o;
    if (gatewayError) return { ...fields, statusMessage: gatewayError.message, error: gatewayError };
    const detail = detailRef
      ? (recent.take(detailRef) ?? (await deps.payloads.get<TaskDetail>(detailRef, taskKey, 'detail')))
      : undefined;
    if (!detail) throw new Error('The observed task detail is missing'); // retried; never expected
    return { ...fields, ...stripUndefined(detail) };
  }
}

export type TaskActivities = ReturnType<typeof createActivities>;

function hubOf(deps: ActivityDeps) {
  // Every worker has the store; a missing one is a wiring fault, retried until fixed rather than lost.
  if (!deps.watchHub) throw new Error('This worker has no watch hub store');
  return deps.watchHub;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function stripUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
