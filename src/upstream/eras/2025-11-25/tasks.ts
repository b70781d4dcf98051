/**
 * 2025-11-25 tasks presented as 2026-07-28 Tasks-extension tasks.
 *
 * - Ids: the gateway's upstream task id names the session the task lives in (a 2025 task exists only
 *   in its session's task store): `tr25.<variant>.<session nonce>.<upstream id>`. A task whose session is
 *   gone answers -32602, as a 2026 upstream that forgot a task would.
 * - `tools/call` with `params.task` answers `{task}`; it becomes the flat 2026 task (ttl → ttlMs,
 *   pollInterval → pollIntervalMs). Statuses map one to one.
 * - `tasks/get` asks `tasks/get`, and for a completed or failed task `tasks/result`, whose outcome is
 *   inlined as 2026 requires.
 * - Input: a 2025 server sends its elicitation only on the `tasks/result` stream, and only once. The
 *   gateway reads it from there when the task turns `input_required` (and stops reading), presents it as
 *   the task's `inputRequests` (key `upstream-request-<id>`), and is handed it back on every later poll
 *   (`UpstreamRequestOptions.taskInput`, from the stored task detail), so it survives worker restarts.
 *   `tasks/update` answers are POSTed as the JSON-RPC response with that id, on the task's session.
 *   When the request cannot be read, the upstream task is cancelled and the task fails with the reason.
 * - `tasks/cancel` is `tasks/cancel`.
 */
import type { InputRequests, LegacyTask } from '../../../protocol';
import { LegacyCreateTaskResultSchema, LegacyTaskSchema, RELATED_TASK_META } from '../../../protocol';
import type { UpstreamReply, UpstreamRequestOptions } from '../../endpoint';
import { UpstreamTransportError } from '../../errors';
import type { JsonObject } from '../../http';
import { isPlainObject } from '../../http';
import type { LiveSession, Variant } from './sessions';
import type { Exchange, ExchangeOptions, ServerRequest } from './wire';

/** How long the gateway waits on `tasks/result` for the input request of an `input_required` task. */
export const INPUT_READ_MS = 10_000;

const ID_PREFIX = 'tr25';
const KEY_PREFIX = 'upstream-request-';

/** A task of a session (`variant`, `nonce`), and `id`, the one the gateway knows it by. */
export type TaskRef = { id: string; variant: Variant; nonce: string; upstreamTaskId: string };

export function taskRefOf(session: LiveSession, upstreamTaskId: string): TaskRef {
  const id = `${ID_PREFIX}.${session.variant}.${session.nonce}.${upstreamTaskId}`;
  return { variant: session.variant, nonce: session.nonce, upstreamTaskId, id };
}

export function parseTaskId(id: string): TaskRef | undefined {
  const [prefix, variant, nonce, ...rest] = id.split('.');
  if (prefix !== ID_PREFIX || (variant !== 'plain' && variant !== 'form') || !nonce || rest.length === 0)
    return undefined;
  return { variant, nonce, upstreamTaskId: rest.join('.'), id };
}

/** The input key of an upstream request id (numbers as they are, strings base64url-encoded). */
export function inputKeyOf(requestId: string | number): string {
  return typeof requestId === 'number'
    ? `${KEY_PREFIX}${requestId}`
    : `${KEY_PREFIX}s-${Buffer.from(requestId, 'utf8').toString('base64url')}`;
}

export function requestIdOf(key: string): string | number | undefined {
  if (!key.startsWith(KEY_PREFIX)) return undefined;
  const rest = key.slice(KEY_PREFIX.length);
  if (rest.startsWith('s-')) return Buffer.from(rest.slice(2), 'base64url').toString('utf8');
  return /^-?\d+$/.test(rest) ? Number(rest) : undefined;
}

/** What the task translations need of the session layer. */
export interface TaskIo {
  /** A request on the task's own session (a lost session is reported, never replaced). */
  request(
    session: LiveSession,
    method: string,
    params: JsonObject,
    opts?: ExchangeOptions,
  ): Promise<Exchange>;
  /** A response to a request the upstream sent. */
  deliver(session: LiveSession, message: JsonObject): Promise<Exchange>;
  /** Answers a request the gateway does not relay. */
  refuse(session: LiveSession, request: ServerRequest): void;
  /** The session is gone: forget it. */
  lost(session: LiveSession): Promise<void>;
}

/** The answer for a task whose session is gone: what a 2026 upstream that forgot a task answers. */
export const SESSION_GONE: UpstreamReply = {
  kind: 'error',
  httpStatus: 200,
  error: {
    code: -32602,
    message: 'The upstream session this task lived in has ended; the upstream no longer knows the task',
  },
};

/** A `tools/call` answer: a 2025 `CreateTaskResult` becomes the flat 2026 task; anything else is untouched. */
export function createdTask(
  session: LiveSession,
  result: JsonObject,
): { ref: TaskRef; task: JsonObject } | undefined {
  const created = LegacyCreateTaskResultSchema.safeParse(result);
  if (!created.success) return undefined;
  const ref = taskRefOf(session, created.data.task.taskId);
  return { ref, task: { ...flatTask(created.data.task, ref), resultType: 'task' } };
}

export class Era20251125Tasks {
  constructor(private readonly io: TaskIo) {}

  async get(session: LiveSession, ref: TaskRef, opts: UpstreamRequestOptions): Promise<UpstreamReply> {
    const task = await this.status(session, ref, opts.signal);
    if (!isTask(task)) return task;
    return this.present(session, ref, task, opts, true);
  }

  async update(session: LiveSession, ref: TaskRef, answers: JsonObject): Promise<UpstreamReply> {
    for (const [key, answer] of Object.entries(answers)) {
      const id = requestIdOf(key);
      if (id === undefined || !isPlainObject(answer)) continue; // not an input this task asked for
      const { resultType: _type, ...result } = answer;
      const delivered = await this.io.deliver(session, { id, result });
      const failure = await this.failure(session, delivered);
      if (failure) return failure;
    }
    return complete({});
  }

  async cancel(session: LiveSession, ref: TaskRef, signal?: AbortSignal): Promise<UpstreamReply> {
    const asked = await this.io.request(
      session,
      'tasks/cancel',
      { taskId: ref.upstreamTaskId },
      {
        ...(signal && { signal }),
      },
    );
    return (await this.failure(session, asked)) ?? complete({});
  }

  /** The upstream's `tasks/get`, parsed; or the reply to pass on. */
  private async status(
    session: LiveSession,
    ref: TaskRef,
    signal?: AbortSignal,
  ): Promise<LegacyTask | UpstreamReply> {
    const got = await this.io.request(
      session,
      'tasks/get',
      { taskId: ref.upstreamTaskId },
      {
        ...(signal && { signal }),
      },
    );
    const failure = await this.failure(session, got);
    if (failure) return failure;
    const parsed = LegacyTaskSchema.safeParse(got.kind === 'result' ? got.result : undefined);
    // An invalid task is passed on as it is: the gateway counts it as a failed poll.
    return parsed.success ? parsed.data : complete(got.kind === 'result' ? got.result : {});
  }

  private async present(
    session: LiveSession,
    ref: TaskRef,
    task: LegacyTask,
    opts: UpstreamRequestOptions,
    mayRead: boolean,
  ): Promise<UpstreamReply> {
    const base = flatTask(task, ref);
    if (task.status === 'completed' || task.status === 'failed') {
      const outcome = await this.io.request(
        session,
        'tasks/result',
        { taskId: ref.upstreamTaskId },
        {
          ...(opts.signal && { signal: opts.signal }),
          onRequest: (r) => this.io.refuse(session, r),
        },
      );
      if (outcome.kind === 'session-lost') return (await this.failure(session, outcome)) ?? SESSION_GONE;
      return complete(hideId({ ...base, ...terminal(task, outcome) }, ref));
    }
    if (task.status !== 'input_required') return complete(base);
    const open = opts.taskInput?.open ?? {};
    if (Object.keys(open).length > 0) return complete({ ...base, inputRequests: open });
    // Everything asked was answered; the upstream has not moved on yet.
    if ((opts.taskInput?.answered.length ?? 0) > 0) return complete({ ...base, status: 'working' });
    if (!mayRead) return complete({ ...base, status: 'working' });
    return this.readInput(session, ref, base, opts);
  }

  /** Reads the input request from the `tasks/result` stream, where a 2025 server sends it once. */
  private async readInput(
    session: LiveSession,
    ref: TaskRef,
    base: JsonObject,
    opts: UpstreamRequestOptions,
  ): Promise<UpstreamReply> {
    const timeout = AbortSignal.timeout(INPUT_READ_MS);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    let read: Exchange | undefined;
    try {
      read = await this.io.request(
        session,
        'tasks/result',
        { taskId: ref.upstreamTaskId },
        {
          signal,
          // Every request on this stream is the task's own (2025-11-25); ping is answered and skipped.
          onRequest: (r) => {
            if (r.method !== 'ping') return true;
            this.io.refuse(session, r);
            return false;
          },
        },
      );
    } catch (err) {
      if (opts.signal?.aborted || !timeout.aborted) throw err;
    }
    if (read?.kind === 'interrupted') {
      const { method, params } = read.request;
      const request = { method, ...(params && { params: withoutRelatedTask(params) }) };
      const inputRequests: InputRequests = { [inputKeyOf(read.request.id)]: request };
      return complete(hideId({ ...base, inputRequests }, ref));
    }
    if (read?.kind === 'session-lost') return (await this.failure(session, read)) ?? SESSION_GONE;
    // The task moved on while the stream was open (its outcome came instead), or nothing came.
    const now = await this.status(session, ref, opts.signal);
    if (!isTask(now)) return now;
    if (now.status !== 'input_required') return this.present(session, ref, now, opts, false);
    await this.io.request(session, 'tasks/cancel', { taskId: ref.upstreamTaskId }).catch(() => undefined);
    return complete({
      ...base,
      status: 'failed',
      error: {
        code: -32603,
        message: `The upstream task asked for input, but its request did not arrive on the tasks/result stream within ${INPUT_READ_MS / 1000} s (a 2025 server sends it only once); the upstream task was cancelled`,
      },
    });
  }

  /** The reply for an exchange that did not succeed (a lost session is forgotten); undefined if it did. */
  private async failure(session: LiveSession, exchange: Exchange): Promise<UpstreamReply | undefined> {
    switch (exchange.kind) {
      case 'result':
      case 'accepted':
        return undefined;
      case 'error':
        return exchange;
      case 'session-lost':
        await this.io.lost(session);
        return SESSION_GONE;
      default:
        throw new UpstreamTransportError(
          `Upstream "${session.endpoint.alias}" answered a task request with ${exchange.kind}`,
          true,
        );
    }
  }
}

function isTask(v: LegacyTask | UpstreamReply): v is LegacyTask {
  return !('kind' in v);
}

function complete(result: JsonObject): UpstreamReply {
  return { kind: 'result', result: { ...result, resultType: result.resultType ?? 'complete' } };
}

/** The 2026 task: intervals renamed, the gateway's id; other fields (extensions, `_meta`) as they are. */
function flatTask(t: LegacyTask, ref: TaskRef): JsonObject {
  const { ttl, pollInterval, ...fields } = t;
  return {
    ...fields,
    taskId: ref.id,
    ttlMs: ttl,
    ...(pollInterval !== undefined && { pollIntervalMs: pollInterval }),
  };
}

/** A terminal task's outcome as 2026 inlines it: `result` when completed, `error` when failed. */
function terminal(task: LegacyTask, outcome: Exchange): JsonObject {
  if (outcome.kind === 'result') {
    const result = { ...withoutRelatedTask(outcome.result), resultType: 'complete' };
    if (task.status === 'completed') return { result };
    return {
      error: { code: -32603, message: task.statusMessage ?? 'The upstream task failed', data: { result } },
    };
  }
  if (outcome.kind === 'error') return { status: 'failed', error: outcome.error };
  return {
    status: 'failed',
    error: { code: -32603, message: `The upstream did not hand over the task's outcome (${outcome.kind})` },
  };
}

/** `_meta["io.modelcontextprotocol/related-task"]` belongs to the 2025 hop. */
function withoutRelatedTask(o: JsonObject): JsonObject {
  if (!isPlainObject(o._meta) || !(RELATED_TASK_META in o._meta)) return o;
  const { [RELATED_TASK_META]: _related, ...meta } = o._meta;
  const { _meta: _old, ...rest } = o;
  return Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest;
}

/** The upstream's own task id, where it echoes it, becomes the gateway's (which the gateway hides in turn). */
function hideId(o: JsonObject, ref: TaskRef): JsonObject {
  const { taskId, ...rest } = o;
  const text = JSON.stringify(rest);
  if (ref.upstreamTaskId.length < 8 || !text.includes(ref.upstreamTaskId)) return o;
  return { ...(JSON.parse(text.split(ref.upstreamTaskId).join(ref.id)) as JsonObject), taskId };
}
