/**
 * One poll of an upstream task, shared by the watch activity (src/activities/index.ts, which loops over
 * it inside one activity) and the watch hub (src/temporal/watch-hub.ts, which schedules it from memory):
 * tasks/get, the snapshot compared with the one the workflow holds, expiry, the failure budget, a task the
 * upstream forgot (-32602), a credential that is gone, an answer too large, and an upstream task that
 * completed or failed recorded at once. Either caller decides only when to poll next and how to hand the
 * outcome to the workflow.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { TaskSnapshot } from '../protocol';
import { METHOD } from '../protocol';
import type { UpstreamReply, UpstreamRequestOptions } from '../upstream/client';
import { boundError, UpstreamAnswerTooLarge } from '../upstream/errors';
import { taskPathCapabilities, upstreamMeta } from '../upstream/meta';
import { snapshotKey } from '../store/tasks/snapshot-key';
import { WarnThrottle } from '../telemetry/warn-throttle';
import type { TaskObservation } from '../workflows/messages';
import type { ActivityDeps } from './deps';
import type { TaskDetail } from './observation';
import { observationOf, taskDetailOf } from './observation';
import type { RecentDetails } from './recent-details';
import { toSnapshot } from './snapshot';
import { countTransition, expired } from './support';
import type { UpstreamTaskRef, WatchUpstreamTaskInput, WatchUpstreamTaskResult } from './types';

/** The upstream's own ends, recorded by the poll that sees them (recordEnd). */
const ENDS_RECORDED_BY_THE_POLL: ReadonlySet<string> = new Set(['completed', 'failed']);

/** What a watch keeps between its polls. */
export interface PollCursor {
  /** Consecutive failed polls, and the last failure's description. */
  failures: number;
  lastError: string;
  /** When the stored detail is due for a refresh (an unchanged answer then counts as changed). */
  refreshAt: number;
  /** The open input requests the upstream client gets back on every poll (WatchUpstreamTaskInput.openInput). */
  taskInput: UpstreamRequestOptions['taskInput'];
}

/** A poll's outcome: the watch ends with `done`, or polls again in `againMs`. */
export type PollStep = { done: WatchUpstreamTaskResult } | { againMs: number; failed: boolean };

export function createWatchPoll(deps: ActivityDeps, recent: RecentDetails) {
  const { settings, logger } = deps;
  const pollFailureLog = new WarnThrottle(logger);

  const hopMeta = (protocolVersion: string, elicitationForm = false) =>
    upstreamMeta({
      relayedMeta: {},
      protocolVersion,
      capabilities: taskPathCapabilities(elicitationForm),
      gatewayInfo: deps.gatewayInfo,
    });

  const detailOf = (reply: UpstreamReply, upstreamTaskId: string) =>
    reply.kind === 'result' ? toSnapshot(reply.result, settings, upstreamTaskId) : undefined;

  async function taskRequest(
    ref: UpstreamTaskRef,
    method: string,
    signal: AbortSignal,
    extra: Record<string, unknown> = {},
    taskInput?: UpstreamRequestOptions['taskInput'],
  ) {
    const endpoint = await deps.resolveUpstream(ref);
    return deps.upstream.send(
      endpoint,
      method,
      { ...extra, taskId: ref.upstreamTaskId, _meta: hopMeta(ref.protocolVersion) },
      { signal, ...(taskInput && { taskInput }) },
    );
  }

  /**
   * Stores what the workflow must not carry (the detail: status message, input requests, result, error,
   * re-published metadata) as a payload and returns the workflow's payload-free observation of it; the
   * detail is kept in memory for the workflow's record of it (RecentDetails).
   */
  async function observe(taskKey: string, snapshot: TaskSnapshot): Promise<TaskObservation> {
    const detail = taskDetailOf(snapshot);
    const detailRef = await deps.payloads.put(taskKey, 'detail', detail);
    recent.remember(detailRef, detail);
    return observationOf(snapshot, detailRef);
  }

  /**
   * A changed snapshot as the workflow's observation. An upstream task that completed or failed is also
   * recorded in the store at once, as the workflow would record it: its client sees the end (tasks/get,
   * push) without waiting for the signal, the workflow task and its local activity, which under load
   * queue behind each other (a burst of tasks ending together). The store's first terminal write is final,
   * so the workflow's own record of the same end would change nothing: the watch's result says it was
   * recorded, and the workflow skips it. Only an end the upstream reached by itself: the ends the gateway
   * decides (expired, lost, unreachable, unrelayable input) stay the workflow's, and so does `cancelled`,
   * which the workflow itself may have caused on its way to one of those (it cancels the upstream task,
   * then records `failed` with its reason); a poll the workflow no longer waits for (an old enlistment
   * until its hub's next renewal, a watch activity until its next heartbeat) would otherwise record that
   * cancellation first and hide the reason.
   *
   * A recorded end's detail is stored all the same, in the record's transaction (one commit per end, not
   * two): a workflow from before `recorded` was said records it again from there. It is not kept in memory
   * for a record that will not come.
   */
  async function changed(
    input: WatchUpstreamTaskInput,
    snapshot: TaskSnapshot,
  ): Promise<WatchUpstreamTaskResult> {
    if (input.projectSlug === undefined || !ENDS_RECORDED_BY_THE_POLL.has(snapshot.status))
      return { kind: 'changed', observation: await observe(input.taskKey, snapshot) };
    const detail = taskDetailOf(snapshot);
    let detailRef: string | undefined;
    const recorded = await deps.store.recordSnapshot(input.taskKey, snapshot, async (trx) => {
      detailRef = await deps.payloads.put(input.taskKey, 'detail', detail, trx);
    });
    if (detailRef === undefined) throw new Error('The observed task detail was not stored'); // never expected
    if (recorded) countTransition(input.projectSlug, snapshot.status);
    else recent.remember(detailRef, detail);
    const observation = observationOf(snapshot, detailRef);
    return { kind: 'changed', observation, ...(recorded && { recorded: true as const }) };
  }

  /** The input requests of the last observation, split into still open and answered. */
  async function openInputOf(input: WatchUpstreamTaskInput): Promise<UpstreamRequestOptions['taskInput']> {
    if (!input.openInput) return undefined;
    const { detailRef, keys } = input.openInput;
    const detail = await deps.payloads.get<TaskDetail>(detailRef, input.taskKey, 'detail');
    const requests = Object.entries(detail?.inputRequests ?? {});
    return {
      open: Object.fromEntries(requests.filter(([k]) => keys.includes(k))),
      answered: requests.filter(([k]) => !keys.includes(k)).map(([k]) => k),
    };
  }

  /** A watch's state before its first poll (reads the stored detail's age and the open input). */
  async function startCursor(input: WatchUpstreamTaskInput): Promise<PollCursor> {
    const storedAt =
      settings.detailRefreshMs === undefined ? undefined : await deps.store.detailStoredAt(input.taskKey);
    const refreshAt =
      storedAt === undefined ? Infinity : Date.parse(storedAt) + (settings.detailRefreshMs ?? 0);
    return { failures: 0, lastError: '', refreshAt, taskInput: await openInputOf(input) };
  }

  /**
   * One tasks/get. `signal` aborts the request (activity cancellation, the hub stopping); an aborted
   * poll's error is thrown. `request` wraps the upstream request (the activity heartbeats around it).
   */
  async function pollOnce(
    input: WatchUpstreamTaskInput,
    cursor: PollCursor,
    signal: AbortSignal,
    request: <T>(work: () => Promise<T>) => Promise<T> = (work) => work(),
  ): Promise<PollStep> {
    let reply: UpstreamReply | undefined;
    try {
      // A 2025-era upstream's input request is read from a stream that may take a while.
      reply = await request(() => taskRequest(input, METHOD.tasksGet, signal, {}, cursor.taskInput));
    } catch (err) {
      if (signal.aborted) throw err;
      // The task's credential is gone (revoked, expired, upstream removed): polling cannot succeed.
      if (err instanceof ApplicationFailure && err.nonRetryable)
        return { done: { kind: 'unreachable', message: err.message } };
      // Its answer is too large to read: the next poll's would be as well (a deadline is retried).
      if (err instanceof UpstreamAnswerTooLarge) {
        const { kind: _kind, ...error } = boundError(err);
        return { done: { kind: 'failed', error } };
      }
      cursor.lastError = err instanceof Error ? err.message : String(err);
    }
    if (reply?.kind === 'error' && reply.error.code === -32602)
      return { done: { kind: 'lost', error: reply.error } };
    const snapshot = reply ? detailOf(reply, input.upstreamTaskId) : undefined;
    if (snapshot) {
      cursor.failures = 0;
      if (snapshotKey(snapshot) !== input.knownKey || Date.now() >= cursor.refreshAt) {
        return { done: await changed(input, snapshot) };
      }
      if (expired(snapshot)) return { done: { kind: 'expired' } };
      return { againMs: snapshot.pollIntervalMs ?? input.pollIntervalMs, failed: false };
    }
    if (reply?.kind === 'error')
      cursor.lastError = `upstream error ${reply.error.code}: ${reply.error.message}`;
    else if (reply) cursor.lastError = 'upstream sent an invalid task';
    cursor.failures++;
    // A dead upstream fails the polls of all its tasks: one warning per upstream and window.
    pollFailureLog.warn(
      `${input.project}\u0000${input.upstream}`,
      { upstream: input.upstream, failures: cursor.failures },
      'task poll failed',
    );
    if (cursor.failures >= settings.pollFailureBudget)
      return { done: { kind: 'unreachable', message: cursor.lastError } };
    return {
      againMs: Math.min(30_000, input.pollIntervalMs * 2 ** Math.min(cursor.failures, 6)),
      failed: true,
    };
  }

  return { taskRequest, detailOf, observe, startCursor, pollOnce };
}

export type WatchPoll = ReturnType<typeof createWatchPoll>;
