/**
 * A 2025-era upstream (2025-03-26, 2025-06-18, 2025-11-25) behind the gateway's one internal model: it
 * takes 2026-07-28 requests and answers as a 2026-07-28 upstream would (with the Tasks extension when it
 * runs `tools/call` as 2025-11-25 tasks). Sessions: sessions.ts; requests the upstream sends: server-
 * requests.ts; tasks: tasks.ts; everything else: translate.ts. docs/interop.md has the whole picture.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { LRUCache } from 'lru-cache';
import type { Implementation, TaskSupport } from '../../../protocol';
import { METHOD, taskSupportOf } from '../../../protocol';
import type { AnswerContexts } from '../../answers';
import type { ResumePoint, UpstreamEndpoint, UpstreamReply, UpstreamRequestOptions } from '../../endpoint';
import { UpstreamTransportError } from '../../errors';
import type { JsonObject } from '../../http';
import { isPlainObject } from '../../http';
import { refusesEra20251125 } from './refusals';
import { refusal, StandaloneStreams } from './server-requests';
import type { Era20251125SessionStore, LiveSession, Variant } from './sessions';
import { EraRefusedError, handshake, Era20251125Sessions, MAX_LIVE_SESSIONS, targetOf } from './sessions';
import { createdTask, Era20251125Tasks, parseTaskId, SESSION_GONE } from './tasks';
import {
  declaresTasks,
  ERA_20251125_LIST_TTL_MS,
  era20251125Params,
  era20260728Result,
  synthesizedDiscover,
  tasksRequired,
  variantOf,
} from './translate';
import type { UpstreamTransport } from '../../transport/types';
import { STATUS } from '../../transport/types';
import type { Exchange, ServerRequest } from './wire';
import { Era20251125Wire } from './wire';
import { watchEra20251125Lists } from './list-watch';

export { EraRefusedError } from './sessions';

export interface Era20251125UpstreamDeps {
  /** How messages reach the upstream (src/upstream/transport); list watches use its `stream` lane. */
  transport: UpstreamTransport;
  store: Era20251125SessionStore;
  clientInfo: Implementation;
  warn: (message: string, detail: Record<string, unknown>) => void;
  /** How each endpoint's answers are read: bounds and parser (answers.ts). */
  answers: AnswerContexts;
}

/** Upper bound on pages read for a tool list, so a looping cursor cannot hold the gateway. */
const MAX_TOOL_PAGES = 20;
/** How long a request waits for its session's standalone stream to open (requests may arrive on it). */
const STREAM_WAIT_MS = 2_000;
/** A task whose ttl is unlimited keeps its session from being ended at shutdown for good. */
const FOREVER = '9999-12-31T23:59:59.999Z';

const TASK_NOT_FOUND: UpstreamReply = {
  kind: 'error',
  httpStatus: 200,
  error: { code: -32602, message: 'Task not found' },
};

export class Era20251125Upstream {
  private readonly wire: Era20251125Wire;
  private readonly watchWire: Era20251125Wire;
  private readonly sessions: Era20251125Sessions;
  private readonly streams: StandaloneStreams;
  private readonly tasks: Era20251125Tasks;
  /**
   * Each session's tools and how they take tasks, for `params.task` and the -32021 answer; as many as
   * sessions are kept (a list pushed out is listed again when next needed).
   */
  private readonly tools = new LRUCache<
    string,
    { nonce: string; support: Map<string, TaskSupport>; expiresAt: number }
  >({ max: MAX_LIVE_SESSIONS });

  constructor(private readonly deps: Era20251125UpstreamDeps) {
    this.wire = new Era20251125Wire(deps.transport, deps.answers);
    this.watchWire = new Era20251125Wire(deps.transport, deps.answers, 'stream');
    this.streams = new StandaloneStreams(this.wire);
    this.sessions = new Era20251125Sessions(this.wire, deps.store, deps.clientInfo);
    this.tasks = new Era20251125Tasks({
      request: (s, method, params, opts) => this.wire.request(targetOf(s), method, params, opts),
      deliver: (s, message) => this.wire.deliver(targetOf(s), message),
      refuse: (s, request) => this.streams.refuse(s, request),
      lost: (s) => this.sessions.forget(s),
    });
  }

  /**
   * Holds a session of its own open with its standalone stream, handing the upstream's list changes to
   * `onNotification` as a 2026 listen would (list-watch.ts), until the stream ends or `signal` aborts.
   */
  async watchLists(
    endpoint: UpstreamEndpoint,
    onNotification: (message: Record<string, unknown>) => void,
    signal: AbortSignal,
  ): Promise<void> {
    return watchEra20251125Lists(this.watchWire, endpoint, this.deps.clientInfo, onNotification, signal);
  }

  /** One 2026-07-28 request, translated; throws EraRefusedError when the upstream no longer speaks 2025. */
  async send(
    endpoint: UpstreamEndpoint,
    method: string,
    params: JsonObject,
    opts: UpstreamRequestOptions,
  ): Promise<UpstreamReply> {
    switch (method) {
      case METHOD.discover: {
        const session = await this.session(endpoint, 'plain');
        const watchable = session.sessionId !== null && session.sessionId !== undefined;
        return { kind: 'result', result: synthesizedDiscover(session.initialize, endpoint, watchable) };
      }
      case METHOD.toolsCall:
        return this.callTool(endpoint, params, opts);
      case METHOD.tasksGet:
      case METHOD.tasksUpdate:
      case METHOD.tasksCancel:
        return this.taskMethod(endpoint, method, params, opts);
      default: {
        const { exchange } = await this.exchange(
          endpoint,
          variantOf(params),
          method,
          era20251125Params(params),
          opts,
        );
        return reply(method, exchange, endpoint);
      }
    }
  }

  /** The probe: `initialize` and `notifications/initialized`, then the session is ended again. */
  async handshake(endpoint: UpstreamEndpoint, signal: AbortSignal): Promise<string> {
    const opened = await handshake(this.wire, endpoint, {}, this.deps.clientInfo, signal);
    await this.wire.end({ endpoint, ...opened }).catch(() => {});
    return opened.protocolVersion;
  }

  async close(): Promise<void> {
    this.streams.close();
    await this.sessions.close((err, s) =>
      this.deps.warn('a 2025-era upstream session could not be ended', {
        upstream: s.endpoint.alias,
        err: err instanceof Error ? err.message : String(err),
      }),
    );
  }

  /** The scope's session, with its standalone stream open in this process (waited for briefly when new). */
  private async session(endpoint: UpstreamEndpoint, variant: Variant): Promise<LiveSession> {
    const session = await this.sessions.acquire(endpoint, variant);
    await this.listening(session);
    return session;
  }

  private async listening(session: LiveSession): Promise<void> {
    await Promise.race([this.streams.watch(session), sleep(STREAM_WAIT_MS, undefined, { ref: false })]);
  }

  /** A request on the scope's session; a session the upstream forgot is replaced once and the request sent again. */
  private async exchange(
    endpoint: UpstreamEndpoint,
    variant: Variant,
    method: string,
    params: JsonObject,
    opts: UpstreamRequestOptions,
  ): Promise<{ session: LiveSession; exchange: Exchange }> {
    let session = await this.session(endpoint, variant);
    for (let attempt = 0; ; attempt++) {
      const current = session;
      const exchange = await this.wire.request(targetOf(current), method, params, {
        ...(opts.signal && { signal: opts.signal }),
        ...(opts.deadline && { quietMs: opts.deadline.ms }),
        ...(opts.onResumePoint &&
          current.sessionId && {
            onResumePoint: (p: { requestId: string; eventId: string }) =>
              opts.onResumePoint?.({ ...p, sessionId: current.sessionId as string, variant }),
          }),
        ...(opts.onNotification && { onNotification: opts.onNotification }),
        ...(opts.prepare && { prepare: { ...opts.prepare, legacy: true } }),
        ...(opts.traceHeaders && { headers: opts.traceHeaders }),
        onRequest: (request) => this.answerRequest(current, request, opts),
      });
      if (exchange.kind === 'version-refused') throw new EraRefusedError(exchange.message);
      // A 2026-only server refuses a request without the 2026 envelope (HTTP 400) before processing
      // it (SDK 2025 servers answer JSON-RPC errors with 200): the era is probed again.
      if (refusesEra20251125(exchange)) throw new EraRefusedError(exchange.error.message, exchange);
      // A forgotten session never processed the request: sending it again on a new one is safe.
      if (exchange.kind === 'session-lost' && attempt === 0) {
        session = await this.sessions.renew(current);
        await this.listening(session);
        continue;
      }
      return { session: current, exchange };
    }
  }

  /**
   * Takes up the answer of a tools/call another process sent on the session (`point`), if the session is
   * still the scope's and the upstream keeps its streams; undefined when it cannot be taken up.
   */
  async resumeCall(
    endpoint: UpstreamEndpoint,
    point: ResumePoint,
    opts: UpstreamRequestOptions,
  ): Promise<UpstreamReply | undefined> {
    const session = await this.session(endpoint, point.variant as Variant);
    if (session.sessionId !== point.sessionId) return undefined;
    const exchange = await this.wire.resume(targetOf(session), point, {
      ...(opts.signal && { signal: opts.signal }),
      ...(opts.deadline && { quietMs: opts.deadline.ms }),
      ...(opts.onNotification && { onNotification: opts.onNotification }),
      ...(opts.onResumePoint && {
        onResumePoint: (p: { requestId: string; eventId: string }) =>
          opts.onResumePoint?.({ ...p, sessionId: point.sessionId, variant: point.variant }),
      }),
      onRequest: (request) => this.answerRequest(session, request, opts),
    });
    // Only the request's own response counts; a refusal of the resumption (a status other than OK) is none.
    if (exchange.kind === 'result') return reply(METHOD.toolsCall, exchange, endpoint);
    if (exchange.kind === 'error' && exchange.httpStatus === STATUS.ok) {
      return reply(METHOD.toolsCall, exchange, endpoint);
    }
    return undefined;
  }

  /**
   * A request on a call's own stream: relayed to the caller when it can answer (`onServerRequest`, for
   * `elicitation/create`), refused otherwise (server-requests.ts).
   */
  private answerRequest(
    session: LiveSession,
    request: ServerRequest,
    opts: UpstreamRequestOptions,
  ): void | Promise<void> {
    const relay = opts.onServerRequest;
    if (!relay || request.method !== 'elicitation/create') return this.streams.refuse(session, request);
    return relay(request)
      .then((answer) =>
        this.wire.deliver(targetOf(session), answer ? { id: request.id, ...answer } : refusal(request)),
      )
      .then(
        () => undefined,
        () => undefined,
      );
  }

  private async callTool(
    endpoint: UpstreamEndpoint,
    params: JsonObject,
    opts: UpstreamRequestOptions,
  ): Promise<UpstreamReply> {
    const variant = variantOf(params);
    const name = String(params.name);
    const session = await this.session(endpoint, variant);
    const runsTasks = session.initialize.capabilities.tasks?.requests?.tools?.call !== undefined;
    const support = runsTasks ? await this.taskSupport(endpoint, session, name, opts) : 'forbidden';
    const tasks = declaresTasks(params);
    if (!tasks && support === 'required') return tasksRequired(name);
    const asTask = tasks && support !== 'forbidden';
    const body = { ...era20251125Params(params), ...(asTask && { task: {} }) };
    // A task's creation is read as it is: only a plain result may be prepared (cut) where it is parsed.
    const { prepare: _prepare, ...plain } = opts;
    const { session: used, exchange } = await this.exchange(
      endpoint,
      variant,
      METHOD.toolsCall,
      body,
      asTask ? plain : opts,
    );
    const created = asTask && exchange.kind === 'result' ? createdTask(used, exchange.result) : undefined;
    if (!created) return reply(METHOD.toolsCall, exchange, endpoint);
    const ttl = created.task.ttlMs;
    const from = Date.parse(String(created.task.createdAt));
    const until =
      typeof ttl === 'number'
        ? new Date((Number.isNaN(from) ? Date.now() : from) + ttl).toISOString()
        : FOREVER;
    await this.sessions.pin(used, until);
    return { kind: 'result', result: created.task };
  }

  /** How a tool takes tasks, from the session's own tool list (sessions may list different tools). */
  private async taskSupport(
    endpoint: UpstreamEndpoint,
    session: LiveSession,
    name: string,
    opts: UpstreamRequestOptions,
  ): Promise<TaskSupport> {
    let entry = this.tools.get(session.scope);
    if (!entry || entry.nonce !== session.nonce || entry.expiresAt <= Date.now()) {
      const support = new Map<string, TaskSupport>();
      let cursor: string | undefined;
      for (let page = 0; page < MAX_TOOL_PAGES; page++) {
        const listed = await this.exchange(
          endpoint,
          session.variant,
          METHOD.toolsList,
          cursor ? { cursor } : {},
          {
            ...(opts.signal && { signal: opts.signal }),
          },
        );
        if (listed.exchange.kind !== 'result') break;
        const r = listed.exchange.result;
        for (const tool of Array.isArray(r.tools) ? r.tools : []) {
          if (isPlainObject(tool) && typeof tool.name === 'string')
            support.set(tool.name, taskSupportOf(tool));
        }
        cursor = typeof r.nextCursor === 'string' ? r.nextCursor : undefined;
        if (!cursor) break;
      }
      entry = { nonce: session.nonce, support, expiresAt: Date.now() + ERA_20251125_LIST_TTL_MS };
      this.tools.set(session.scope, entry);
    }
    return entry.support.get(name) ?? 'forbidden';
  }

  private async taskMethod(
    endpoint: UpstreamEndpoint,
    method: string,
    params: JsonObject,
    opts: UpstreamRequestOptions,
  ): Promise<UpstreamReply> {
    const ref = typeof params.taskId === 'string' ? parseTaskId(params.taskId) : undefined;
    if (!ref) return TASK_NOT_FOUND;
    const session = await this.sessions.find(endpoint, ref.variant, ref.nonce);
    if (!session) return SESSION_GONE;
    if (method === METHOD.tasksGet) return this.tasks.get(session, ref, opts);
    if (method === METHOD.tasksCancel) return this.tasks.cancel(session, ref, opts.signal);
    const answers = isPlainObject(params.inputResponses) ? params.inputResponses : {};
    return this.tasks.update(session, ref, answers);
  }
}

/** A plain exchange's outcome as the 2026 reply. */
function reply(method: string, exchange: Exchange, endpoint: UpstreamEndpoint): UpstreamReply {
  switch (exchange.kind) {
    case 'result':
      return {
        kind: 'result',
        result: era20260728Result(method, exchange.result, endpoint),
        ...(exchange.prepared && { prepared: true }),
      };
    case 'error':
      return exchange;
    case 'session-lost':
      throw new UpstreamTransportError(
        `Upstream "${endpoint.alias}" forgot its new session at once: ${exchange.message}`,
        false,
      );
    default:
      throw new UpstreamTransportError(
        `Upstream "${endpoint.alias}" ended its answer to ${method} without a response`,
        true,
      );
  }
}
