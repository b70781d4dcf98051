/**
 * `/v1/mcp/{projectSlug}`: MCP Streamable HTTP, protocol 2026-07-28 (stateless), and through the 2025-era
 * adapter (./legacy) the 2025 eras' sessions. A chain of small Koa middlewares; each step does one thing
 * and throws the spec's error when it refuses:
 *
 *   POST:        jsonRpcReplies → refuseForeignOrigin → authenticate → readFrame → dispatch | legacy
 *   GET, DELETE: jsonRpcReplies → refuseForeignOrigin → authenticate → sessionRequest (2025 sessions)
 *   otherwise:   jsonRpcReplies → refuseForeignOrigin → authenticate → 405
 *
 * Every method authenticates before its method is judged: a caller without valid credentials hears the
 * 401 challenge whatever it sent (a sign-in bridge probes with a bare GET and starts listening for the
 * OAuth callback only on a 401), and only an authenticated one learns that the method is not served.
 *
 * `jsonRpcReplies` is the one place a reply is written: a result from `dispatch`, or whatever a later step
 * threw, mapped by `toJsonRpcError`. Replies are JSON unless an upstream notification has to be relayed
 * first (and the client accepts SSE): the response then becomes a stream that ends with the reply.
 */
import type { Middleware, ParameterizedContext } from 'koa';
import compose from 'koa-compose';
import type { Logger } from 'pino';
import { DEFAULT_JSON_SHAPE } from '../../config/config';
import type { StreamsConfig } from '../../config/streams';
import { DEFAULT_STREAMS } from '../../config/streams';
import type { McpGateway } from '../../gateway/gateway';
import type { JsonRpcMessage, JsonRpcRequest, JsonRpcResponse, McpMethod, RequestId } from '../../protocol';
import {
  GATEWAY_ERROR_CODES,
  HEADER,
  MODERN_METHODS,
  PROTOCOL_VERSION,
  ProtocolError,
  isKnownMethod,
} from '../../protocol';
import { withLogContext } from '../../telemetry/log-context';
import { mcpRequestSeconds, mcpRequests } from '../../telemetry/metrics';
import type { ControlPlane } from '../../store/control-plane/types';
import { principalId } from '../../store/control-plane/types';
import type { Caller } from '../authenticate';
import { authenticateCaller } from '../authenticate';
import { toJsonRpcError } from '../errors';
import { challengeHeader, tokenPrincipal } from '../oauth/mcp-auth';
import type { OAuthResourceServer } from '../oauth/resource-server';
import type { OriginPolicy } from '../origin';
import { refuseOrigin } from '../origin';
import { checkedEnvelope } from './envelope';
import type { FrameLimits, JsonShapeLimits } from './frame';
import { newRequestId } from './request-ids';
import { readMessage } from './frame';
import type { LegacyClients, LegacyExchange } from './legacy/adapter';
import { LegacyClients as Legacy } from './legacy/adapter';
import { ResponseStream } from './response-stream';
import type { Subscriptions } from './subscriptions';

export interface McpEndpointDeps {
  gateway: McpGateway;
  controlPlane: ControlPlane;
  logger: Logger;
  maxBodyBytes: number;
  /** Bounds on a request body's JSON shape (`http.maxJson*`; default `DEFAULT_JSON_SHAPE`). */
  jsonShape?: JsonShapeLimits;
  origin: OriginPolicy;
  subscriptions: Subscriptions;
  /** The 2025-era client adapter; without it 2025 requests are answered as 2026 ones (refused). */
  legacy?: LegacyClients;
  /** OAuth access tokens beside API tokens, and the resource metadata challenge (docs/oauth.md). */
  oauth?: OAuthResourceServer;
  /** Bounds on the streams to clients (default: the `streams` section's defaults). */
  streams?: StreamsConfig;
}

const MCP_PATH = /^\/v1\/mcp\/([^/]+)\/?$/;
const LISTEN: McpMethod = 'subscriptions/listen';

/** What the steps of one MCP request learn, in the order they learn it. */
interface McpRequest {
  slug: string;
  stream: ResponseStream;
  id: RequestId | null;
  method: string;
  /** HTTP status of the reply (for the request log; a stream's is 200). */
  status: number;
  /** `2026-07-28`, or `2025` for a 2025-era session (metrics). */
  era: string;
  caller?: Caller;
  message?: JsonRpcMessage;
  /** Aborted when the client goes away before the answer. */
  signal: AbortSignal;
}

type McpContext = ParameterizedContext<{ mcp: McpRequest }>;
type Step = Middleware<{ mcp: McpRequest }>;

export function mcpEndpoint(deps: McpEndpointDeps): Middleware {
  const common = [
    jsonRpcReplies(deps.logger, deps.oauth),
    refuseForeignOrigin(deps.origin),
    authenticate(deps.controlPlane, deps.oauth),
  ];
  const post = compose<McpContext>([
    ...common,
    readFrame({ maxBytes: deps.maxBodyBytes, ...(deps.jsonShape ?? DEFAULT_JSON_SHAPE) }),
    dispatch(deps),
  ]);
  const sessionOnly = compose<McpContext>([...common, sessionRequest(deps.legacy)]);
  const notServed = compose<McpContext>([...common, methodNotAllowed]);
  return async (ctx, next) => {
    const match = MCP_PATH.exec(ctx.path);
    if (!match) {
      if (!ctx.path.startsWith('/v1/mcp/')) return next();
      // Below an endpoint there is nothing: say so in the endpoint's own language.
      ctx.status = 404;
      ctx.body = {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32601, message: 'No MCP endpoint at this path' },
      };
      return;
    }
    const controller = new AbortController();
    ctx.res.once('close', () => {
      if (!ctx.res.writableFinished) controller.abort();
    });
    const c = ctx as McpContext;
    const stream = new ResponseStream(ctx.res, ctx.get('accept').includes('text/event-stream'), {
      onStart: () => {
        ctx.respond = false; // the stream writes the response itself from here on
      },
      // A stream ended for its client's sake ends the work feeding it (the upstream call) too.
      onOverflow: () => controller.abort(),
      requestId: () => c.state.mcp.id,
      project: () => c.state.mcp.caller?.project.slug,
      limits: deps.streams ?? DEFAULT_STREAMS,
      logger: deps.logger,
    });
    const slug = safeDecode(match[1] as string);
    ctx.state.mcp = {
      slug,
      stream,
      id: null,
      method: '',
      status: 200,
      era: ctx.get(HEADER.sessionId) === '' ? PROTOCOL_VERSION : '2025',
      signal: controller.signal,
    };
    const requestId = newRequestId();
    ctx.set('X-Request-Id', requestId);
    return withLogContext({ requestId, project: slug }, () => route(c));
  };

  async function route(ctx: McpContext): Promise<void> {
    if (ctx.method === 'POST') return post(ctx);
    // GET and DELETE mean something to 2025-era sessions only; a 2026 client has neither.
    if (
      (ctx.method === 'GET' || ctx.method === 'DELETE') &&
      deps.legacy &&
      ctx.get(HEADER.sessionId) !== ''
    ) {
      return sessionOnly(ctx);
    }
    return notServed(ctx);
  }
}

/** A method the endpoint does not serve, told only to an authenticated caller (the chain's last step). */
const methodNotAllowed: Step = async (ctx) => {
  ctx.state.mcp.status = 405;
  emptyReply(ctx, 405);
  ctx.set('Allow', 'POST');
};

/** Writes the reply: the result `dispatch` left, or the JSON-RPC error for whatever was thrown. */
function jsonRpcReplies(logger: Logger, oauth: OAuthResourceServer | undefined): Step {
  return async (ctx, next) => {
    const started = performance.now();
    const mcp = ctx.state.mcp;
    let outcome = 'ok';
    try {
      await next();
    } catch (err) {
      const reply = toJsonRpcError(err, mcp.id);
      outcome = metricOutcome(reply.body.error.code);
      if (reply.status >= 500 && !(err instanceof ProtocolError)) logger.error({ err }, 'request failed');
      const challenge = challengeHeader(oauth, mcp.slug, err, reply.status);
      if (challenge !== undefined && !ctx.res.headersSent) ctx.set('WWW-Authenticate', challenge);
      if (reply.headers && !ctx.res.headersSent) ctx.set(reply.headers);
      respond(ctx, reply.status, reply.body);
    } finally {
      const seconds = (performance.now() - started) / 1000;
      const labels = { method: metricMethod(mcp.method), era: mcp.era };
      mcpRequests.inc({ ...labels, outcome });
      mcpRequestSeconds.observe(labels, seconds);
      logger.debug(
        {
          project: mcp.slug,
          method: mcp.method,
          status: mcp.status,
          ms: Math.round(performance.now() - started),
        },
        'mcp request',
      );
    }
  };
}

function refuseForeignOrigin(policy: OriginPolicy): Step {
  return async (ctx, next) => {
    const refused = refuseOrigin(policy, ctx.get('host'), ctx.get('origin'));
    if (refused) throw new ProtocolError('Forbidden', refused);
    await next();
  };
}

function authenticate(controlPlane: ControlPlane, oauth: OAuthResourceServer | undefined): Step {
  return async (ctx, next) => {
    const { slug } = ctx.state.mcp;
    ctx.state.mcp.caller = await authenticateCaller(
      controlPlane,
      slug,
      ctx.get('authorization'),
      oauth && tokenPrincipal(oauth, oauth.resourceUrl(slug)),
    );
    await next();
  };
}

/** One message; a notification is accepted (202) and ends the request here. */
function readFrame(limits: FrameLimits): Step {
  return async (ctx, next) => {
    const message = await readMessage(ctx.req, ctx.get('content-type'), limits, {
      // Only a 2025-era session answers requests of the gateway's (input it relayed on a stream).
      responses: ctx.get(HEADER.sessionId) !== '',
    });
    if (!('id' in message)) {
      ctx.state.mcp.status = 202;
      emptyReply(ctx, 202);
      return;
    }
    const method = 'method' in message ? message.method : '';
    Object.assign(ctx.state.mcp, { message, id: 'method' in message ? message.id : null, method });
    await next();
  };
}

function dispatch(deps: McpEndpointDeps): Step {
  return async (ctx) => {
    const { message, caller, stream, id, method, signal } = ctx.state.mcp;
    if (!message || !('id' in message) || !caller) throw new Error('dispatch out of order');
    if (deps.legacy && (!('method' in message) || Legacy.owns(message, (n) => ctx.get(n)))) {
      ctx.state.mcp.era = '2025';
      return legacyDispatch(ctx, deps.legacy, message as JsonRpcRequest | JsonRpcResponse);
    }
    if (!('method' in message) || id === null)
      throw new ProtocolError('InvalidRequest', 'Invalid JSON-RPC message');
    if (!MODERN_METHODS.has(method)) {
      throw new ProtocolError('MethodNotFound', `Method not found: ${method}`);
    }
    const header = (name: string) => ctx.get(name);
    const meta = checkedEnvelope(message, header);
    if (method === LISTEN) {
      if (!stream.canStream) {
        throw new ProtocolError(
          'InvalidRequest',
          'subscriptions/listen answers with a stream: send Accept: text/event-stream',
        );
      }
      const call = { ...caller, method, params: { ...message.params, _meta: meta }, signal };
      await deps.subscriptions.listen(call, id, stream, ctx.res, listenerKey(caller));
      return;
    }
    const result = await deps.gateway.handle({
      ...caller,
      method,
      params: { ...message.params, _meta: meta },
      signal,
      notify: (n) => stream.relay(n),
      whenWritable: () => stream.whenWritable(),
      keepAlive: () => stream.comment('keep-alive'),
      header: (name) => header(name) || undefined,
    });
    respond(ctx, 200, { jsonrpc: '2.0', id, result });
  };
}

/** A 2025-era client's POST: `initialize`, a request of its session, or an answer to our request. */
async function legacyDispatch(
  ctx: McpContext,
  legacy: LegacyClients,
  message: JsonRpcRequest | JsonRpcResponse,
): Promise<void> {
  const x = exchange(ctx);
  if (!('method' in message)) {
    await legacy.answer(x, await legacy.session(x), message);
    ctx.state.mcp.status = 202;
    emptyReply(ctx, 202);
    return;
  }
  const result =
    message.method === 'initialize' && ctx.get(HEADER.sessionId) === ''
      ? await legacy.initialize(x, message)
      : await legacy.request(x, await legacy.session(x), message);
  respond(ctx, 200, { jsonrpc: '2.0', id: message.id, result });
}

/** GET and DELETE of a 2025-era session: DELETE ends it; GET resumes a lost stream, or is 405. */
function sessionRequest(legacy: LegacyClients | undefined): Step {
  return async (ctx) => {
    if (!legacy) throw new Error('sessionRequest without the 2025 adapter');
    const x = exchange(ctx);
    if (ctx.method === 'DELETE') {
      await legacy.end(x);
      ctx.state.mcp.status = 200;
      emptyReply(ctx, 200);
      return;
    }
    const session = await legacy.session(x);
    // A lost response stream of a call answered by a durable task resumes here, on any replica.
    const point = legacy.resumePoint(x, session);
    if (point) {
      ctx.state.mcp.id = point.requestId;
      respond(ctx, 200, {
        jsonrpc: '2.0',
        id: point.requestId,
        result: await legacy.resume(x, session, point),
      });
      return;
    }
    // No server stream otherwise (the era allows 405): nothing is sent outside a request.
    ctx.state.mcp.status = 405;
    emptyReply(ctx, 405);
    ctx.set('Allow', 'POST, DELETE');
  };
}

/** Methods as a metrics label: the ones the gateway knows; anything a client invents is `other`. */
function metricMethod(method: string): string {
  if (method === '') return 'none';
  return isKnownMethod(method) ? method : 'other';
}

/**
 * An error's code as a metrics label: the codes of the gateway's table; any other (an upstream's own,
 * relayed unchanged, which an upstream can vary without end) is `other`, so no upstream adds series.
 */
function metricOutcome(code: number): string {
  return GATEWAY_ERROR_CODES.has(code) ? String(code) : 'other';
}

/** Whose listen streams count together against the per-caller cap. */
function listenerKey(caller: Caller): string {
  const p = principalId(caller.principal);
  return `${caller.project.id}/${p.kind}:${p.id}`;
}

function exchange(ctx: McpContext): LegacyExchange {
  const { caller, stream, signal } = ctx.state.mcp;
  if (!caller) throw new Error('exchange before authentication');
  return {
    caller,
    header: (n) => ctx.get(n),
    setHeader: (n, v) => ctx.set(n, v),
    stream,
    signal,
  };
}

/** The final message: the last SSE event if the stream was opened, else a JSON body. */
function respond(ctx: McpContext, status: number, body: Record<string, unknown>): void {
  const { stream } = ctx.state.mcp;
  ctx.state.mcp.status = status;
  if (stream.isStreaming) {
    stream.finish(body);
    return;
  }
  if (ctx.res.headersSent || ctx.res.destroyed) return;
  ctx.status = status;
  ctx.set('Content-Type', 'application/json');
  ctx.body = JSON.stringify(body);
}

/** A reply without a body (Koa would otherwise write the status text, or turn a null body into 204). */
function emptyReply(ctx: McpContext, status: number): void {
  ctx.body = null;
  ctx.status = status;
}

/** A malformed escape in the path is just an unknown project, never an exception. */
function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
