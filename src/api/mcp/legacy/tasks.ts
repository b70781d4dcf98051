/**
 * The 2025-11-25 task surface, served from the same durable gateway tasks as 2026 tasks and through the
 * same gateway code (so the same ownership and authorization checks): `tools/call` with `params.task`,
 * `tasks/get`, `tasks/cancel`, and `tasks/result`, which waits for the outcome and meanwhile delivers the
 * task's open input requests on its stream as `elicitation/create` requests with sealed ids
 * (./input-ids.ts). The client's answer, POSTed to any replica, is handed to the task like `tasks/update`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_INLINE_TASK_WAIT_MS } from '../../../config/config';
import type { McpCall, McpGateway } from '../../../gateway/gateway';
import { withGatewayMeta } from '../../../gateway/responses/responses';
import type { Implementation, InputRequests, JsonRpcErrorObject } from '../../../protocol';
import { LEGACY_METHOD, ProtocolError, RelayedError } from '../../../protocol';
import { taskKeyOf } from '../../../store/tasks/task-store';
import type { ResponseStream } from '../response-stream';
import type { InputRequestIds } from './input-ids';
import type { LegacySession } from './session';
import { legacyResult, legacyTask, relatedTaskMeta, sessionTakesTasks } from './translate';

/** What the task surface needs of one 2025 request. */
export interface LegacyBridge {
  session: LegacySession;
  stream: ResponseStream;
  signal: AbortSignal;
  gateway: McpGateway;
  /** The request as an internal (2026) call; `withTasks` declares the Tasks extension on it. */
  call(
    method: string,
    params: Record<string, unknown>,
    tasks?: McpCall['tasks'],
    withTasks?: boolean,
  ): McpCall;
  /** Makes the response resumable: its events name the task (and request) that will answer it. */
  resumable(kind: 'inline' | 'result', taskId: string): void;
  /** Answers an internal call, relaying any input it asks for (MRTR) to the client on this stream. */
  forward(method: string, params: Record<string, unknown>, tasks?: McpCall['tasks']): Promise<Result>;
}

type Result = Record<string, unknown>;

const CHECK_EVERY_MS = 500;
const KEEP_ALIVE_MS = 15_000;

export class LegacyTasks {
  constructor(
    private readonly inputIds: InputRequestIds,
    private readonly serverInfo: Implementation,
  ) {}

  /**
   * `tools/call`: with `params.task` (and a session that takes tasks) always a task; without it, a plain
   * call, which the gateway may still run as a task and answer inline, relaying input on this stream.
   */
  async callTool(b: LegacyBridge, params: Result): Promise<Result> {
    const { task, ...rest } = params;
    if (task !== undefined && sessionTakesTasks(b.session)) {
      const result = await b.gateway.handle(b.call('tools/call', rest, { force: true }, true));
      if (result.resultType !== 'task') return legacyResult(result);
      return { task: legacyTask(result), ...(result._meta !== undefined && { _meta: result._meta }) };
    }
    return legacyResult(
      await b.forward('tools/call', rest, {
        relayInput: this.relay(b),
        onStarted: (taskId) => b.resumable('inline', taskId),
      }),
    );
  }

  async handle(b: LegacyBridge, method: string, params: Result): Promise<Result> {
    // SDK 1.x clients also send `params.task: {}` on follow-ups: only the id matters.
    const taskId = params.taskId;
    if (method === LEGACY_METHOD.tasksList) {
      const listed = await b.gateway.listCallerTasks(
        b.call('tasks/list', {}, undefined, true),
        params.cursor,
      );
      return { ...listed, tasks: (listed.tasks as Result[]).map(legacyTask) };
    }
    if (typeof taskId !== 'string')
      throw new ProtocolError('InvalidParams', 'params.taskId must be a string');
    if (method === 'tasks/cancel')
      await b.gateway.handle(b.call('tasks/cancel', { taskId }, undefined, true));
    if (method === LEGACY_METHOD.tasksResult) return this.result(b, taskId);
    return legacyTask(await this.get(b, taskId));
  }

  /** A POSTed answer to one of the task input requests this surface sent. */
  async answer(
    b: LegacyBridge,
    target: { taskKey: string; inputKey: string },
    response: { result?: unknown },
  ) {
    // An error instead of an answer: the client would not answer, which is what `cancel` says.
    const answer = response.result !== undefined ? response.result : { action: 'cancel' };
    await b.gateway.answerTaskInput(b.call('tasks/update', {}, undefined, true), target.taskKey, {
      [target.inputKey]: answer as Record<string, unknown>,
    });
  }

  private get(b: LegacyBridge, taskId: string): Promise<Result> {
    return b.gateway.handle(b.call('tasks/get', { taskId }, undefined, true));
  }

  /** `tasks/result`: waits for the outcome, delivering open input requests on the way. */
  private async result(b: LegacyBridge, taskId: string): Promise<Result> {
    b.resumable('result', taskId);
    const relay = this.relay(b, taskId);
    const relayed = new Set<string>();
    const call = b.call('tasks/get', { taskId }, undefined, true);
    const deadline = Date.now() + (call.project.limits.inlineTaskWaitMs ?? DEFAULT_INLINE_TASK_WAIT_MS);
    let lastKeepAlive = Date.now();
    let lastStatus = '';
    for (;;) {
      const task = await b.gateway.handle(call);
      const status = `${String(task.status)}:${String(task.statusMessage ?? '')}`;
      // Status changes reach the client on this stream as they happen (the era's optional notification).
      if (status !== lastStatus && lastStatus !== '' && b.stream.canStream) {
        b.stream.notify({ jsonrpc: '2.0', method: LEGACY_METHOD.taskStatus, params: legacyTask(task) });
      }
      lastStatus = status;
      if (task.status === 'completed') {
        // The result as stored carries the upstream's `_meta`, and its serverInfo when the upstream
        // answered at once: the answer names the gateway, as every answer on this endpoint does.
        const result = withGatewayMeta((task.result ?? { content: [] }) as Result, this.serverInfo);
        return { ...legacyResult(result), _meta: relatedTaskMeta(taskId, result._meta) };
      }
      if (task.status === 'failed') {
        const error = task.error as JsonRpcErrorObject;
        throw new RelayedError(error.code, error.message, error.data);
      }
      if (task.status === 'cancelled')
        throw new ProtocolError('InternalError', `Task ${taskId} was cancelled`);
      if (task.status === 'input_required') {
        const open = (task.inputRequests ?? {}) as InputRequests;
        const fresh = Object.fromEntries(Object.entries(open).filter(([k]) => !relayed.has(k)));
        if (Object.keys(fresh).length > 0) {
          if (!relay(taskKeyOf(taskId), fresh)) {
            throw new ProtocolError(
              'InvalidRequest',
              'The task needs input: call tasks/result accepting text/event-stream to receive its requests',
            );
          }
          for (const k of Object.keys(fresh)) relayed.add(k);
        }
      }
      if (b.signal.aborted) throw new ProtocolError('InternalError', 'The client went away');
      if (Date.now() >= deadline) {
        throw new ProtocolError(
          'TaskStillRunning',
          `Task ${taskId} is still running; call tasks/result again`,
          {
            taskId,
          },
        );
      }
      if (Date.now() - lastKeepAlive >= KEEP_ALIVE_MS) {
        b.stream.comment('keep-alive');
        lastKeepAlive = Date.now();
      }
      await sleep(CHECK_EVERY_MS, undefined, { signal: b.signal }).catch(() => {});
    }
  }

  /** The relay of a resumed inline wait (its open input goes out again on the new stream). */
  relayFor(b: LegacyBridge) {
    return this.relay(b);
  }

  /**
   * Sends a task's open form elicitations to the client on this request's stream, each with an id that
   * routes the answer back to the task. False when the client cannot take a stream (JSON only).
   */
  private relay(b: LegacyBridge, taskId?: string) {
    return (taskKey: string, requests: InputRequests): boolean => {
      if (!b.stream.canStream) return false;
      for (const [inputKey, request] of Object.entries(requests)) {
        if (request.method !== 'elicitation/create') return false;
        const { mode, _meta, ...params } = (request.params ?? {}) as Result;
        b.stream.notify({
          jsonrpc: '2.0',
          id: this.inputIds.idFor(b.session, { kind: 'task', taskKey, inputKey }),
          method: 'elicitation/create',
          params: {
            ...params,
            // Modes exist from 2025-11-25 on; earlier eras know form elicitation only.
            ...(b.session.version === '2025-11-25' && mode !== undefined && { mode }),
            ...((taskId !== undefined || _meta !== undefined) && {
              _meta: taskId !== undefined ? relatedTaskMeta(taskId, _meta) : _meta,
            }),
          },
        });
      }
      return true;
    };
  }
}
