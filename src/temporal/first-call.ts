/**
 * A task-aware call's first upstream call, made by the API process itself (`tasks.firstCallFrom: api`;
 * the decision and its guarantees: docs/decisions.md, "The first call from the API"). The gateway
 * reaches it through the `FirstCallPort` type (src/gateway/context.ts), injected by main.
 *
 * 1. The call is claimed in the store (`first_calls`, state `sending`) before it is sent: no side effect
 *    the gateway does not know of.
 * 2. A synchronous answer (or an error) goes back to the client as such; the claim becomes `done`. No
 *    workflow, no task: the call never was one.
 * 3. An upstream task is recorded in one transaction: the task row (`working`, or what the upstream
 *    said), the payloads its workflow needs (request, detail, upstream task id, the workflow's own start
 *    input), in hub mode the task's watch hub row (see createdWatch: the hub watches it whether or not
 *    its workflow has run yet) and the claim's move to `recorded`. Then the workflow is started with a
 *    plain start and begins by watching that task; the claim becomes `started`. If the start fails, the
 *    record stands: the creation reconciler (creation-reconciler.ts, worker role) starts it within
 *    `tasks.reconcileEveryMs`. The client gets its handle after the record and the start attempt:
 *    `tasks/get` answers from the task row whether or not the workflow runs yet.
 *
 * The call is not aborted when the client goes away: its answer is needed to record a task the upstream
 * may have created (the upstream client's own deadline bounds it).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { sendToolCall } from '../activities/first-call';
import { observationOf, taskDetailOf } from '../activities/observation';
import type { PollBounds } from '../activities/snapshot';
import { toSnapshot } from '../activities/snapshot';
import type { Implementation, JsonRpcErrorObject, TaskSnapshot } from '../protocol';
import { CreateTaskResultSchema, METHOD, ProtocolError } from '../protocol';
import type { FirstCalls } from '../store/tasks/first-calls';
import type { PayloadStore } from '../store/tasks/payload-store';
import type { TaskStore } from '../store/tasks/task-store';
import { taskWorkflowStartSeconds } from '../telemetry/metrics';
import type { UpstreamClient, UpstreamEndpoint, UpstreamReply } from '../upstream/client';
import { taskPathCapabilities, upstreamMeta } from '../upstream/meta';
import type { TaskObservation, TaskWorkflowInput, UpstreamCallPayload } from '../workflows/messages';
import { CREATED_ENLISTMENT, taskRowOf, taskWorkflowId } from '../workflows/messages';
import { TaskState } from '../workflows/task-state';
import { refOf, watchInputOf } from '../workflows/watch-input';
import { watchEnlistmentOf } from '../activities/watch-enlistment';
import { WatchHubStore } from '../store/tasks/watch-hub';
import type { TaskEngine } from './task-engine';
import { errorText } from '../telemetry/log-context';

/** What the API's first call came to: the answer itself, or the task it created (recorded). */
export type DirectOutcome =
  | { kind: 'result'; result: Record<string, unknown> }
  | { kind: 'error'; error: JsonRpcErrorObject }
  | { kind: 'task'; observation: TaskObservation };

export interface DirectCall {
  /** The workflow input; `call.requestRef` is still empty: the request is stored only if a task comes. */
  input: TaskWorkflowInput;
  request: UpstreamCallPayload;
  /** The gateway task id, stored for 2025-era clients' tasks/list when they take tasks (`call.tasks`). */
  taskIdForListing?: string;
}

export interface DirectFirstCallDeps {
  upstream: UpstreamClient;
  store: TaskStore;
  payloads: PayloadStore;
  firstCalls: FirstCalls;
  engine: TaskEngine;
  gatewayInfo: Implementation;
  logger: Logger;
  bounds: PollBounds;
  startTimeoutMs: number;
  /**
   * `tasks.hub.adoptApiEnlistment`: the workflow may adopt the task's row (see createdWatch). Required: a
   * caller that left it out would run with a default other than the config's.
   */
  adoptableEnlistment: boolean;
}

/**
 * For tests only: runs between a task's record and its workflow's start. Throwing there stands for the
 * API process dying at that point (the task recorded, its workflow never started by the API).
 */
export const firstCallTestHooks: { afterRecord?: (taskKey: string) => Promise<void> } = {};

export class DirectFirstCall {
  constructor(private readonly deps: DirectFirstCallDeps) {}

  async run(endpoint: UpstreamEndpoint, direct: DirectCall): Promise<DirectOutcome> {
    const { firstCalls } = this.deps;
    const { input } = direct;
    const claim = await firstCalls.claim(input.taskKey, 'sending').catch((err: unknown) => {
      this.deps.logger.error({ err: errorText(err) }, 'first call not claimed');
      throw new ProtocolError(
        'TaskEngineUnavailable',
        'The gateway could not record the call before sending it (its store did not answer); nothing was sent to the upstream. Try again later.',
      );
    });
    if (!claim.won) throw new Error('The task key was already claimed');
    let reply: UpstreamReply;
    try {
      reply = await firstCalls.whileSending(input.taskKey, () =>
        sendToolCall(
          { upstream: this.deps.upstream, gatewayInfo: this.deps.gatewayInfo },
          endpoint,
          input,
          direct.request,
          { sleep: (ms) => sleep(ms) },
        ),
      );
    } catch (err) {
      await this.settled(input.taskKey);
      const message = err instanceof Error ? err.message : `Upstream "${input.upstream}" call failed`;
      return { kind: 'error', error: { code: -32603, message } };
    }
    if (reply.kind === 'result' && reply.result.resultType === 'task') {
      const created = CreateTaskResultSchema.safeParse(reply.result);
      if (created.success) return this.recordAndStart(endpoint, direct, created.data.taskId, created.data);
      await this.settled(input.taskKey);
      return {
        kind: 'error',
        error: { code: -32603, message: `Upstream "${input.upstream}" answered with an invalid task` },
      };
    }
    await this.settled(input.taskKey);
    return reply.kind === 'error'
      ? { kind: 'error', error: reply.error }
      : { kind: 'result', result: reply.result };
  }

  /**
   * The claim of a call answered without a task becomes `done`. The answer is relayed even if this
   * write fails: the claim then stays `sending` and is declared lost later (counted, nothing re-sent).
   */
  private async settled(taskKey: string): Promise<void> {
    await this.deps.firstCalls
      .move(taskKey, 'sending', 'done')
      .catch((err: unknown) =>
        this.deps.logger.warn({ err: errorText(err) }, 'first call claim not settled'),
      );
  }

  private async recordAndStart(
    endpoint: UpstreamEndpoint,
    direct: DirectCall,
    upstreamTaskId: string,
    created: Record<string, unknown>,
  ): Promise<DirectOutcome> {
    const { payloads, store, firstCalls } = this.deps;
    const { taskKey } = direct.input;
    const upstreamSnapshot = await this.snapshotOfCreated(endpoint, direct, upstreamTaskId, created);
    // As on the worker path: the task is as old as the client's call, not the upstream's record of it.
    const snapshot: TaskSnapshot = { ...upstreamSnapshot, createdAt: direct.input.createdAt };
    let input: TaskWorkflowInput = direct.input;
    let observation: TaskObservation | undefined;
    const recording = firstCalls.record(taskKey, async (trx) => {
      const requestRef = await payloads.put(taskKey, 'request', direct.request, trx);
      if (direct.taskIdForListing !== undefined)
        await payloads.put(taskKey, 'task_id', direct.taskIdForListing, trx);
      await payloads.put(taskKey, 'upstream_task_id', upstreamTaskId, trx);
      const detailRef = await payloads.put(taskKey, 'detail', taskDetailOf(upstreamSnapshot), trx);
      // The change key is the upstream's (its createdAt), as the watch computes it; the rest the gateway's.
      observation = { ...observationOf(upstreamSnapshot, detailRef), createdAt: direct.input.createdAt };
      const carriedInput: TaskWorkflowInput = {
        ...direct.input,
        call: { ...direct.input.call, requestRef },
        carried: {
          upstreamTaskId,
          observed: observation,
          answeredKeys: [],
          pendingInputs: [],
          cancelSent: false,
        },
      };
      const watch = createdWatch(carriedInput, this.deps.adoptableEnlistment);
      input = watch?.adoptBefore
        ? { ...carriedInput, createdEnlistment: { adoptBefore: watch.adoptBefore } }
        : carriedInput;
      await payloads.put(taskKey, 'start_input', input, trx);
      await store.insertTaskIn(trx, {
        ...taskRowOf(input, taskWorkflowId(taskKey)),
        snapshot,
        ...(watch && { firstPollDueAt: watch.dueAt }),
      });
      if (watch) await WatchHubStore.enlistCreated(trx, watch.enlistment, watch.dueAt);
    });
    await recording.catch((err: unknown) => {
      // The claim stays `sending`: the reconciler declares it lost (counted), and nothing sends it again.
      this.deps.logger.error({ err: errorText(err) }, 'task created upstream but not recorded');
      throw new ProtocolError(
        'InternalError',
        `Upstream "${direct.input.upstream}" created a task, but the gateway could not record it; the call may have been sent and was not repeated`,
      );
    });
    await firstCallTestHooks.afterRecord?.(taskKey);
    await this.startRecorded(input);
    return { kind: 'task', observation: observation as TaskObservation };
  }

  /**
   * Starts the workflow of a recorded task. A failure is logged, not thrown: the task is recorded, so
   * the client gets its handle, and the creation reconciler starts the workflow.
   */
  private async startRecorded(input: TaskWorkflowInput): Promise<void> {
    const started = process.hrtime.bigint();
    try {
      await this.deps.engine.startCreated(input, this.deps.startTimeoutMs);
      taskWorkflowStartSeconds.observe(Number(process.hrtime.bigint() - started) / 1e9);
      await this.deps.firstCalls.move(input.taskKey, 'recorded', 'started');
    } catch (err) {
      this.deps.logger.warn(
        { err: errorText(err), project: input.projectSlug },
        'task recorded, its workflow not started yet; the creation reconciler will start it',
      );
    }
  }

  /**
   * The task as the upstream created it. A create result may announce a status whose detail (result,
   * error, input requests) only tasks/get carries; reading it is safe to repeat, unlike the call. A task
   * that cannot be read now is recorded as `working`: its watch reads it again and records what it became.
   */
  private async snapshotOfCreated(
    endpoint: UpstreamEndpoint,
    direct: DirectCall,
    upstreamTaskId: string,
    created: Record<string, unknown>,
  ): Promise<TaskSnapshot> {
    const { bounds } = this.deps;
    const fromCreate = toSnapshot(created, bounds, upstreamTaskId);
    if (fromCreate) return fromCreate;
    try {
      const reply = await this.deps.upstream.send(endpoint, METHOD.tasksGet, {
        taskId: upstreamTaskId,
        _meta: upstreamMeta({
          relayedMeta: {},
          protocolVersion: direct.input.call.protocolVersion,
          capabilities: taskPathCapabilities(false),
          gatewayInfo: this.deps.gatewayInfo,
        }),
      });
      const read = reply.kind === 'result' ? toSnapshot(reply.result, bounds, upstreamTaskId) : undefined;
      if (read) return read;
    } catch (err) {
      this.deps.logger.warn(
        { err: errorText(err), upstream: direct.input.upstream },
        'created task not readable yet',
      );
    }
    const now = new Date().toISOString();
    return { status: 'working', createdAt: now, lastUpdatedAt: now, ttlMs: null };
  }
}

/**
 * The API's enlistment falls due no sooner than this: where the task's interval is shorter, an unhurried
 * workflow enlists the task itself within milliseconds, replacing the row before any hub claims it
 * (claimed too, the task is polled once for each enlistment); the row is for a workflow kept waiting
 * (under a burst of creations, minutes). At this interval or longer the workflow may adopt the row
 * (`tasks.hub.adoptApiEnlistment`; createdWatch).
 */
const CREATED_FIRST_POLL_MIN_MS = 2000;

/**
 * A workflow adopts the API's row only if its run started this long before the row falls due: the hub
 * polls by its host's clock, the run's start time is the Temporal server's, the due time the API's.
 */
const ADOPTION_CLOCK_MARGIN_MS = 500;

/**
 * A created task the hub polls (`tasks.watchBy: hub`) is enlisted with its record, due at its first poll
 * (one interval, at least CREATED_FIRST_POLL_MIN_MS; due from then on, not before, for the watch lag and
 * tasks/get's stale mark). It is watched from then on whether or not its workflow has run yet (under a
 * burst of creations a new workflow's first workflow task can wait minutes in Temporal's queue, and the
 * task went unpolled all that time). A poll that sees it end records the end; the workflow takes the
 * hub's word for this enlistment (CREATED_ENLISTMENT) until it enlists the task itself. Only a `working`
 * task: one that asks for input already, or ended, is the workflow's to handle first.
 *
 * With `tasks.hub.adoptApiEnlistment`, when the row falls due at the task's own interval (not later, as
 * CREATED_FIRST_POLL_MIN_MS makes it for short intervals), the workflow may adopt it as its first
 * enlistment (`adoptBefore`; hub-watch.ts): the hub's first poll comes when the workflow's own would
 * have, and the workflow writes no row of its own.
 */
function createdWatch(input: TaskWorkflowInput, adoptionAllowed: boolean) {
  const carried = input.carried;
  if (input.watchBy !== 'hub' || carried?.observed.status !== 'working') return undefined;
  const state = new TaskState(carried);
  const watch = watchInputOf(state, refOf(input, state), input);
  const enlistment = watchEnlistmentOf({
    ...watch,
    workflowId: taskWorkflowId(input.taskKey),
    generation: CREATED_ENLISTMENT,
  });
  const firstPollMs = Math.max(watch.pollIntervalMs, CREATED_FIRST_POLL_MIN_MS);
  const dueAtMs = Date.now() + firstPollMs;
  const adoptable = adoptionAllowed && firstPollMs === watch.pollIntervalMs;
  return {
    enlistment,
    dueAt: new Date(dueAtMs).toISOString(),
    ...(adoptable && { adoptBefore: new Date(dueAtMs - ADOPTION_CLOCK_MARGIN_MS).toISOString() }),
  };
}
