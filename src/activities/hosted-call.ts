/**
 * Activities of a hosted task (docs/hosted-tasks.md): the gateway's own task around an ordinary upstream
 * `tools/call`, for tools the project upstream's hosting policy names. The call runs in the worker, not
 * in the client's request: its answer completes the task, however long it takes and whoever is still
 * connected.
 *
 * Sent at most once unless the tool may be repeated: a marker (payload kind `hosted_sent`) is written
 * before the call goes out, so an attempt after a lost worker knows the call may have reached the
 * upstream and sends it again only when the policy (or the tool's annotations) allow it. A round's first
 * marker is a claim (one row per task and round): of two attempts racing to send, one sends.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { InputResponses, TaskSnapshot } from '../protocol';
import { METHOD } from '../protocol';
import type { ResumePoint, UpstreamReply } from '../upstream/client';
import { upstreamMeta } from '../upstream/meta';
import type { RecordedAnswer } from '../store/tasks/payload-store';
import { answerOf } from '../store/tasks/payload-store';
import type { TaskObservation, UpstreamCallPayload } from '../workflows/messages';
import { taskRowOf } from '../workflows/messages';
import { FAILURE } from './failures';
import { requiredPayload, sendRetryingUndelivered, toolCallParams } from './upstream-send';
import type { ActivityDeps } from './deps';
import { observationOf, taskDetailOf } from './observation';
import { boundedStatusMessage } from './snapshot';
import { inputRequired, ordinaryAnswer } from './hosted-answer';
import { createHostedSlotActivities } from './hosted-slot';
import { createHostedStatus } from './hosted-status';
import { cancellableSleep } from './sleep';
import { finishedSnapshot, heartbeating, sleepWithHeartbeat } from './support';
import type {
  CallHostedToolInput,
  CallHostedToolResult,
  RecordHostedStatusInput,
  StartHostedTaskInput,
} from './types';

/** A resumed answer silent this long is asked for again from its last event. */
const RESUME_QUIET_MS = 10_000;
/** How long a call without its own deadline (older histories) is resumed for. */
const DEFAULT_RESUME_MS = 3_600_000;
/** Resume points of a call's answer stored at most this often. */
const RESUME_POINT_EVERY_MS = 1000;

export function createHostedActivities(deps: ActivityDeps) {
  const { questionRelay, progressRecorder } = createHostedStatus(deps);
  const { settings } = deps;

  /** The detail stored, the snapshot recorded (never over a terminal status), the observation returned. */
  async function record(taskKey: string, snapshot: TaskSnapshot): Promise<TaskObservation> {
    const detailRef = await deps.payloads.put(taskKey, 'detail', taskDetailOf(snapshot));
    return observationOf(snapshot, detailRef);
  }

  return {
    ...createHostedSlotActivities(deps),
    /**
     * Records a hosted task as `working` before any answer reaches the client. The start deadline is
     * judged with the first-call claim, as for an upstream task (activities/first-call.ts): past it the
     * API may have told the client nothing was started, so nothing is.
     */
    async startHostedTask(input: StartHostedTaskInput): Promise<TaskObservation> {
      const late = input.startDeadline !== undefined && Date.now() > Date.parse(input.startDeadline);
      const claim = await deps.firstCalls?.claim(input.taskKey, late ? 'abandoned' : 'sending');
      if ((claim?.won && late) || claim?.state === 'abandoned') {
        throw ApplicationFailure.create({
          message: 'The task did not start before its deadline; nothing was sent to the upstream',
          type: FAILURE.notStarted,
          nonRetryable: true,
        });
      }
      const snapshot: TaskSnapshot = {
        status: 'working',
        statusMessage: 'Hosted by the gateway: waiting for a worker to make the call',
        createdAt: input.createdAt,
        lastUpdatedAt: new Date().toISOString(),
        ttlMs: settings.finishedTaskTtlMs ?? null,
      };
      const observation = await record(input.taskKey, snapshot);
      await deps.store.insertTask({ ...taskRowOf(input, input.workflowId), snapshot, hosted: true });
      // The claim decided start against abandonment; the task record is what counts from here on.
      await deps.firstCalls?.move(input.taskKey, 'sending', 'done');
      return observation;
    },

    /**
     * Makes the upstream call, heartbeating while it waits; progress notifications become the task's
     * status message. Returns the answer (stored) and the task's final observation; the workflow
     * records it.
     */
    async callHostedTool(input: CallHostedToolInput): Promise<CallHostedToolResult> {
      const ctx = Context.current();
      const round = input.round ?? 0;
      const markers = await deps.payloads.allOf<{ round?: number }>(input.taskKey, 'hosted_sent');
      const sent = markers.some((m) => (m.round ?? 0) === round);
      // An attempt lost after it stored the call's answer (its worker died before the activity completed):
      // the answer stands, whatever the tool, and nothing is sent or taken up again.
      const kept = sent
        ? answerOf(await deps.payloads.firstOfKinds(input.taskKey, ['result', 'error']))
        : undefined;
      if (kept) return finished(input, kept);
      const endpoint = await deps.resolveUpstream(input);
      const request = await requestOf(input);
      // The call is under way from here: the task is no longer waiting for a worker (store/tasks/task-watch.ts).
      await deps.store.watchStarted(input.taskKey);
      // Sent before by an attempt that was lost: its answer is taken up where the upstream keeps it.
      const resumed = sent ? await resumeLost(input, endpoint) : undefined;
      if (sent && !resumed && !input.repeatable) {
        throw ApplicationFailure.create({
          message: `The call to upstream "${input.upstream}" was interrupted after it was sent (the worker running it was lost); it was not repeated because the tool is not marked repeatable`,
          type: FAILURE.callOutcomeUnknown,
          nonRetryable: true,
        });
      }
      let reply: UpstreamReply;
      if (resumed) reply = resumed;
      else {
        const marker = { attempt: ctx.info.attempt, round };
        // A round's first send is claimed, not merely noted, and before anything else is written: an
        // attempt Temporal gave up on (no heartbeat within the timeout, yet still running) and the attempt
        // that replaced it may both have found no marker above, and only the one whose claim lands sends.
        // The other has written nothing, and goes on as an attempt that found the marker would: its answer
        // cannot be taken up (the sender has only just begun), so a repeatable tool is sent again and any
        // other is reported interrupted. Never sent twice.
        const again =
          sent || !(await deps.payloads.putOnce(input.taskKey, 'hosted_sent', `round:${round}`, marker));
        if (again && !input.repeatable) {
          throw ApplicationFailure.create({
            message: `The call to upstream "${input.upstream}" was sent by another attempt of this task (one its worker's heartbeat timeout gave up on), whose answer cannot be taken up; it was not repeated because the tool is not marked repeatable`,
            type: FAILURE.callOutcomeUnknown,
            nonRetryable: true,
          });
        }
        if (again) await deps.payloads.put(input.taskKey, 'hosted_sent', marker);
        const progress = progressRecorder(input, again ? 'sent again after an interruption' : undefined);
        await progress.now(
          again
            ? 'Hosted by the gateway: the call was interrupted and is sent again (the tool is repeatable)'
            : round > 0
              ? 'Hosted by the gateway: the answers went to the upstream, which is working on the call'
              : 'Hosted by the gateway: the upstream is working on the call',
        );
        try {
          reply = await heartbeating(() => send(input, endpoint, request, progress));
        } finally {
          await progress.stop();
        }
      }
      const asking = inputRequired(reply, input.call.elicitationForm);
      if (asking) {
        const { inputResponses: _answered, ...rest } = request;
        const nextRequestRef = await deps.payloads.put(input.taskKey, 'request', {
          ...rest,
          ...(asking.requestState !== undefined && { requestState: asking.requestState }),
        } satisfies UpstreamCallPayload);
        const now = new Date().toISOString();
        const observation = await record(input.taskKey, {
          status: 'input_required',
          statusMessage: 'The upstream asks for input: answer it with tasks/update',
          inputRequests: asking.inputRequests,
          createdAt: input.createdAt,
          lastUpdatedAt: now,
          ttlMs: settings.finishedTaskTtlMs ?? null,
        });
        return { kind: 'input', observation, nextRequestRef };
      }
      const answer = ordinaryAnswer(input.upstream, reply);
      const stored = answer.kind === 'error' ? answer.error : answer.result;
      const ref = await deps.payloads.put(input.taskKey, answer.kind, stored);
      return finished(input, { ...answer, ref });
    },

    /** A status the gateway gives the task itself (cancelled, or failed with its own error). */
    async recordHostedStatus(input: RecordHostedStatusInput): Promise<TaskObservation> {
      const now = new Date().toISOString();
      const snapshot: TaskSnapshot = {
        status: input.status,
        statusMessage: boundedStatusMessage(input.statusMessage, settings.maxStatusMessageChars),
        createdAt: input.createdAt,
        lastUpdatedAt: now,
        ttlMs: settings.finishedTaskTtlMs ?? null,
        ...(input.error && { error: input.error }),
      };
      const observation = await record(input.taskKey, snapshot);
      await deps.store.recordSnapshot(input.taskKey, snapshot);
      return observation;
    },
  };

  /**
   * Where the call's answer could be taken up again (a 2025 session upstream with an event store),
   * stored at most once a second (payload kind `hosted_stream`) for an attempt after a lost worker. Only
   * the latest point of a round is kept (one row, replaced), so a long chatty call holds one row, not
   * one per second until payload retention.
   */
  function resumePointRecorder(input: CallHostedToolInput) {
    let last = 0;
    return (point: ResumePoint) => {
      if (Date.now() - last < RESUME_POINT_EVERY_MS) return;
      last = Date.now();
      deps.payloads
        .putLatest(input.taskKey, 'hosted_stream', String(input.round ?? 0), {
          round: input.round ?? 0,
          point,
        })
        .catch(() => (last = 0));
    };
  }

  /**
   * The answer of a call a lost attempt sent, taken up from its last stored resume point: undefined
   * when there is none, or the upstream cannot resume it (its session or stream is gone).
   */
  async function resumeLost(
    input: CallHostedToolInput,
    endpoint: Awaited<ReturnType<ActivityDeps['resolveUpstream']>>,
  ): Promise<UpstreamReply | undefined> {
    const round = input.round ?? 0;
    const points = await deps.payloads.allOf<{ round: number; point: ResumePoint }>(
      input.taskKey,
      'hosted_stream',
    );
    let point = points.filter((p) => p.round === round).at(-1)?.point;
    if (!point) return undefined;
    const ctx = Context.current();
    const progress = progressRecorder(input, 're-attached after an interruption');
    await progress.now(
      'Hosted by the gateway: the call was interrupted; taking up its answer where the upstream kept it',
    );
    const record = resumePointRecorder(input);
    const until = Date.now() + (input.callDeadlineMs ?? DEFAULT_RESUME_MS);
    // A resumed stream that stays silent is asked again from its last event: some servers replay what
    // was stored when asked but do not send what comes later on the resumed stream.
    try {
      for (;;) {
        try {
          return await heartbeating(() =>
            deps.upstream.resume(endpoint, point as ResumePoint, {
              signal: ctx.cancellationSignal,
              onNotification: progress.onNotification,
              onResumePoint: (next) => {
                point = next;
                record(next);
              },
              deadline: { ms: RESUME_QUIET_MS, limit: 'hosting.callDeadlineMs' },
            }),
          );
        } catch (err) {
          if (ctx.cancellationSignal.aborted) throw err;
          if (Date.now() >= until) {
            deps.logger.warn({ err: err instanceof Error ? err.name : 'error' }, 'hosted call not resumed');
            return undefined;
          }
          await sleepWithHeartbeat(1000);
        }
      }
    } finally {
      await progress.stop();
    }
  }

  /** The call's stored answer: the task's final observation recorded, and returned. */
  async function finished(input: CallHostedToolInput, answer: RecordedAnswer): Promise<CallHostedToolResult> {
    const observation = await record(input.taskKey, {
      ...finishedSnapshot(answer, settings),
      createdAt: input.createdAt,
    });
    return answer.kind === 'error'
      ? { kind: 'error', errorRef: answer.ref, observation }
      : { kind: 'result', resultRef: answer.ref, observation };
  }

  /** This round's request: the call as the client made it, or a retry with the client's answers merged. */
  async function requestOf(input: CallHostedToolInput): Promise<UpstreamCallPayload> {
    const { taskKey } = input;
    const request = await requiredPayload<UpstreamCallPayload>(
      deps.payloads,
      { ref: input.roundRequestRef ?? input.call.requestRef, taskKey, kind: 'request' },
      'The request of this task is no longer stored',
    );
    if (!input.answers?.length) return request;
    const inputResponses: InputResponses = {};
    for (const ref of input.answers) {
      const answers = await requiredPayload<InputResponses>(
        deps.payloads,
        { ref, taskKey, kind: 'input_responses' },
        "The answers to the upstream's questions are no longer stored",
      );
      Object.assign(inputResponses, answers);
    }
    return { ...request, inputResponses };
  }

  /** The tools/call itself. Undelivered attempts are retried here; a bound passed is the answer. */
  async function send(
    input: CallHostedToolInput,
    endpoint: Awaited<ReturnType<ActivityDeps['resolveUpstream']>>,
    request: UpstreamCallPayload,
    progress: Pick<ReturnType<typeof progressRecorder>, 'onNotification' | 'quiet'>,
  ): Promise<UpstreamReply> {
    const ctx = Context.current();
    const _meta = {
      ...upstreamMeta({
        relayedMeta: request.relayedMeta,
        protocolVersion: input.call.protocolVersion,
        // An ordinary call: no Tasks (the upstream answers it itself); form elicitation only if the client
        // declared it (the upstream's questions then become the task's input_required).
        capabilities: input.call.elicitationForm ? { elicitation: { form: {} } } : {},
        gatewayInfo: deps.gatewayInfo,
      }),
      // The gateway's own token: the client's, if any, belongs to a request that may be gone.
      progressToken: `hosted-${input.taskKey.slice(0, 16)}`,
    };
    const params = toolCallParams(input.call.tool, request, _meta);
    return sendRetryingUndelivered(
      () =>
        deps.upstream.send(endpoint, METHOD.toolsCall, params, {
          signal: ctx.cancellationSignal,
          onNotification: progress.onNotification,
          ...(input.call.elicitationForm && { onServerRequest: questionRelay(input, progress) }),
          onResumePoint: resumePointRecorder(input),
          ...(input.callDeadlineMs !== undefined && {
            deadline: { ms: input.callDeadlineMs, limit: 'hosting.callDeadlineMs' as const },
          }),
          ...(request.headers && { headers: request.headers }),
        }),
      {
        upstream: input.upstream,
        // Whether a hosted call that may have been delivered runs again is decided from the store, by the
        // next attempt of the activity (the hosting policy's `repeatable`), never here.
        repeatDelivered: false,
        sleep: (ms) => cancellableSleep(ms, ctx.cancellationSignal),
        signal: ctx.cancellationSignal,
      },
    );
  }
}

export type HostedActivities = ReturnType<typeof createHostedActivities>;
