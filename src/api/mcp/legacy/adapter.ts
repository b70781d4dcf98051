/**
 * The 2025-era client adapter (docs/interop.md): `initialize` and sessions, the era's small methods
 * (`ping`, `logging/setLevel`), every gateway method translated into the internal 2026 model, and the
 * 2025-11-25 task surface (./tasks.ts). The endpoint hands it requests it recognised as 2025-era
 * (`owns`); everything past this module is era-free.
 */
import type { McpCall, McpGateway } from '../../../gateway/gateway';
import type { Implementation, JsonRpcRequest } from '../../../protocol';
import {
  FORWARDED_FOR_2025,
  HEADER,
  InitializeParamsSchema,
  isLegacyVersion,
  LEGACY_METHOD,
  LEGACY_PROTOCOL_VERSIONS,
  LogLevelSchema,
  META,
  PROTOCOL_VERSION,
  ProtocolError,
} from '../../../protocol';
import { principalId } from '../../../store/control-plane/types';
import type { McpClientAnswerStore, McpSessionStore } from '../../../store/sessions/mcp-sessions';
import type { Caller } from '../../authenticate';
import type { ResponseStream } from '../response-stream';
import { CallInputBridge } from './call-input';
import type { InputRequestIds, ResumePoint, ResumeTokens } from './input-ids';
import type { LegacySession, SessionTokens } from './session';
import type { LegacyBridge } from './tasks';
import { LegacyTasks } from './tasks';
import { internalMeta, legacyResult, legacyServerCapabilities, sessionTakesTasks } from './translate';

export interface LegacyDeps {
  gateway: McpGateway;
  tokens: SessionTokens;
  sessions: McpSessionStore;
  inputIds: InputRequestIds;
  resume: ResumeTokens;
  answers: McpClientAnswerStore;
  serverInfo: Implementation;
}

/** One HTTP request of a 2025-era client, as the endpoint saw it. */
export interface LegacyExchange {
  caller: Caller;
  header: (name: string) => string;
  setHeader: (name: string, value: string) => void;
  stream: ResponseStream;
  signal: AbortSignal;
}

export class LegacyClients {
  private readonly tasks: LegacyTasks;
  private readonly callInput: CallInputBridge;

  constructor(private readonly deps: LegacyDeps) {
    this.tasks = new LegacyTasks(deps.inputIds, deps.serverInfo);
    this.callInput = new CallInputBridge(deps.inputIds, deps.answers);
  }

  /**
   * Whether a POSTed message belongs to a 2025-era client: it carries a session, or it is an
   * `initialize` without the 2026 envelope (a 2026 client's `initialize` is a removed method, -32601).
   */
  static owns(message: { method?: string; params?: Record<string, unknown> }, header: (n: string) => string) {
    if (header(HEADER.sessionId) !== '') return true;
    if (message.method !== LEGACY_METHOD.initialize) return false;
    const meta = message.params?._meta as Record<string, unknown> | undefined;
    return meta?.[META.protocolVersion] === undefined && header(HEADER.protocolVersion) !== PROTOCOL_VERSION;
  }

  async initialize(x: LegacyExchange, message: JsonRpcRequest): Promise<Record<string, unknown>> {
    const parsed = InitializeParamsSchema.safeParse(message.params);
    if (!parsed.success) throw new ProtocolError('InvalidParams', 'Invalid initialize params');
    const requested = parsed.data.protocolVersion;
    if (!isLegacyVersion(requested)) {
      throw new ProtocolError('InvalidParams', 'Unsupported protocol version', {
        supported: [...LEGACY_PROTOCOL_VERSIONS],
        requested,
      });
    }
    const { token, session } = this.deps.tokens.issue({
      projectId: x.caller.project.id,
      caller: callerOf(x.caller),
      version: requested,
      capabilities: parsed.data.capabilities,
      clientInfo: parsed.data.clientInfo,
    });
    const discovered = await this.deps.gateway.handle(this.internal(x, session, 'server/discover', {}));
    x.setHeader('Mcp-Session-Id', token);
    return {
      protocolVersion: requested,
      capabilities: legacyServerCapabilities(
        discovered.capabilities as Parameters<typeof legacyServerCapabilities>[0],
        requested,
      ),
      serverInfo: this.deps.serverInfo,
    };
  }

  /** The caller's open session named by `Mcp-Session-Id`; anything else is 404 (re-initialize). */
  async session(x: LegacyExchange): Promise<LegacySession> {
    const session = this.deps.tokens.open(x.header(HEADER.sessionId));
    const valid =
      session !== undefined &&
      session.projectId === x.caller.project.id &&
      session.caller === callerOf(x.caller) &&
      !(await this.deps.sessions.isEnded(session.nonce));
    if (!valid) throw new ProtocolError('SessionNotFound', 'Session not found');
    const header = x.header(HEADER.protocolVersion);
    if (header !== '' && header !== session.version) {
      if (!isLegacyVersion(header) && header !== PROTOCOL_VERSION) {
        throw new ProtocolError('UnsupportedProtocolVersion', 'Unsupported protocol version', {
          supported: [...LEGACY_PROTOCOL_VERSIONS],
          requested: header,
        });
      }
      throw new ProtocolError('InvalidRequest', 'MCP-Protocol-Version does not match the session');
    }
    return session;
  }

  /** Where a GET with `Last-Event-ID` resumes: a response stream whose answer is a durable task. */
  resumePoint(x: LegacyExchange, session: LegacySession): ResumePoint | undefined {
    return this.deps.resume.open(x.header('last-event-id'), session);
  }

  /** Answers the resumed request from its task, on any replica (the stream keeps resumable ids). */
  async resume(
    x: LegacyExchange,
    session: LegacySession,
    point: ResumePoint,
  ): Promise<Record<string, unknown>> {
    const b = this.bridge(x, session, point.requestId);
    if (point.kind === 'result')
      return this.tasks.handle(b, LEGACY_METHOD.tasksResult, { taskId: point.taskId });
    b.resumable('inline', point.taskId);
    const call = b.call('tools/call', {}, { relayInput: this.tasks.relayFor(b) }, true);
    return legacyResult(await this.deps.gateway.resumeInlineTask(call, point.taskId));
  }

  async end(x: LegacyExchange): Promise<void> {
    const session = await this.session(x);
    await this.deps.sessions.end(session.nonce, session.expiresAt);
  }

  async request(x: LegacyExchange, session: LegacySession, message: JsonRpcRequest) {
    const params = message.params ?? {};
    switch (message.method) {
      case LEGACY_METHOD.ping:
        return {};
      case LEGACY_METHOD.setLevel:
        if (!LogLevelSchema.safeParse(params.level).success)
          throw new ProtocolError('InvalidParams', 'params.level must be a logging level');
        return {};
      case 'tools/call':
        return this.tasks.callTool(this.bridge(x, session, message.id), params);
      case 'tasks/get':
      case 'tasks/cancel':
      case LEGACY_METHOD.tasksResult:
      case LEGACY_METHOD.tasksList:
        if (!sessionTakesTasks(session)) throw methodNotFound(message.method);
        return this.tasks.handle(this.bridge(x, session, message.id), message.method, params);
      case 'resources/subscribe':
      case 'resources/unsubscribe':
        // Accepted so the era's clients work; updates are not pushed to 2025 sessions (docs/interop.md).
        if (typeof params.uri !== 'string')
          throw new ProtocolError('InvalidParams', 'params.uri must be a string');
        return {};
      default:
        if (!FORWARDED_FOR_2025.has(message.method)) throw methodNotFound(message.method);
        return legacyResult(
          await this.bridge(x, session).forward(message.method, params, {
            ...(message.method === 'tools/list' && { advertise: sessionTakesTasks(session) }),
          }),
        );
    }
  }

  /**
   * A POSTed response to one of the gateway's requests: a task's input goes to the task like
   * `tasks/update`; a waiting call's answer is parked for the replica holding the call. Responses whose
   * id is not one of ours for this session are ignored.
   */
  async answer(
    x: LegacyExchange,
    session: LegacySession,
    response: { id: unknown; result?: unknown; error?: unknown },
  ): Promise<void> {
    const target = this.deps.inputIds.open(response.id, session);
    if (target?.kind === 'task') await this.tasks.answer(this.bridge(x, session), target, response);
    if (target?.kind === 'call') {
      await this.deps.answers.put(
        target.slot,
        response.result !== undefined ? { result: response.result } : { error: response.error ?? null },
      );
    }
  }

  /** What the task surface needs of this request: internal calls, the stream, the session. */
  private bridge(x: LegacyExchange, session: LegacySession, requestId: string | number = 0): LegacyBridge {
    const c = { session, stream: x.stream, signal: x.signal };
    return {
      ...c,
      // Once the answer is a durable task, the stream's events carry ids a client can resume from.
      resumable: (kind: ResumePoint['kind'], taskId: string) =>
        x.stream.resumable(() => this.deps.resume.eventId(session, { kind, taskId, requestId })),
      gateway: this.deps.gateway,
      call: (method: string, params: Record<string, unknown>, tasks?: McpCall['tasks'], withTasks = false) =>
        this.internal(x, session, method, params, tasks, withTasks),
      // Input an ordinary call asks for (MRTR) travels as the era's server requests on this stream.
      forward: (method: string, params: Record<string, unknown>, tasks?: McpCall['tasks']) =>
        this.callInput.run(c, params, (p) =>
          this.deps.gateway.handle(this.internal(x, session, method, p, tasks)),
        ),
    };
  }

  private internal(
    x: LegacyExchange,
    session: LegacySession,
    method: string,
    params: Record<string, unknown>,
    tasks?: McpCall['tasks'],
    withTasks = false,
  ): McpCall {
    const { _meta: requestMeta, ...rest } = params;
    return {
      ...x.caller,
      method,
      params: { ...rest, _meta: internalMeta(session, requestMeta, { tasks: withTasks }) },
      signal: x.signal,
      notify: (n) => x.stream.relay(n),
      whenWritable: () => x.stream.whenWritable(),
      keepAlive: () => x.stream.comment('keep-alive'),
      ...(tasks && { tasks }),
    };
  }
}

function callerOf(caller: Caller): string {
  const p = principalId(caller.principal);
  return `${p.kind}:${p.id}`;
}

function methodNotFound(method: string): ProtocolError {
  return new ProtocolError('MethodNotFound', `Method not found: ${method}`);
}
