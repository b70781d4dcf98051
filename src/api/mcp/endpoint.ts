/**
 * `POST /v1/mcp/{projectSlug}`: MCP Streamable HTTP, protocol 2026-07-28 (stateless), as a chain of small
 * Koa middlewares. Each step does one thing and throws the spec's error when it refuses:
 *
 *   onlyPost → jsonRpcReplies → refuseForeignOrigin → authenticate → readFrame → dispatch
 *
 * `jsonRpcReplies` is the one place a reply is written: a result from `dispatch`, or whatever a later step
 * threw, mapped by `toJsonRpcError`. Replies are JSON unless an upstream notification has to be relayed
 * first (and the client accepts SSE): the response then becomes a stream that ends with the reply.
 */
import type { Middleware, ParameterizedContext } from 'koa';
import compose from 'koa-compose';
import type { Logger } from 'pino';
import type { McpGateway } from '../../gateway/gateway';
import { GATEWAY_METHODS } from '../../gateway/gateway';
import type { JsonRpcClientMessage, RequestId } from '../../protocol';
import { ProtocolError, REMOVED_METHODS } from '../../protocol';
import type { ControlPlane } from '../../store/control-plane-types';
import type { Caller } from '../authenticate';
import { authenticateCaller } from '../authenticate';
import { toJsonRpcError } from '../errors';
import type { OriginPolicy } from '../origin';
import { refuseOrigin } from '../origin';
import { checkedEnvelope } from './envelope';
import { readMessage } from './frame';
import { ResponseStream } from './response-stream';
import type { Subscriptions } from './subscriptions';

export interface McpEndpointDeps {
  gateway: McpGateway;
  controlPlane: ControlPlane;
  logger: Logger;
  maxBodyBytes: number;
  origin: OriginPolicy;
  subscriptions: Subscriptions;
}

const MCP_PATH = /^\/v1\/mcp\/([^/]+)\/?$/;
const LISTEN = 'subscriptions/listen';

/** What the steps of one MCP request learn, in the order they learn it. */
interface McpRequest {
  slug: string;
  stream: ResponseStream;
  id: RequestId | null;
  method: string;
  /** HTTP status of the reply (for the request log; a stream's is 200). */
  status: number;
  caller?: Caller;
  message?: JsonRpcClientMessage;
}

type McpContext = ParameterizedContext<{ mcp: McpRequest }>;
type Step = Middleware<{ mcp: McpRequest }>;

export function mcpEndpoint(deps: McpEndpointDeps): Middleware {
  const chain = compose<McpContext>([
    onlyPost,
    jsonRpcReplies(deps.logger),
    refuseForeignOrigin(deps.origin),
    authenticate(deps.controlPlane),
    readFrame(deps.maxBodyBytes),
    dispatch(deps),
  ]);
  return async (ctx, next) => {
    const match = MCP_PATH.exec(ctx.path);
    if (!match) return next();
    const stream = new ResponseStream(ctx.res, ctx.get('accept').includes('text/event-stream'), () => {
      ctx.respond = false; // the stream writes the response itself from here on
    });
    ctx.state.mcp = { slug: safeDecode(match[1] as string), stream, id: null, method: '', status: 200 };
    await chain(ctx as McpContext);
  };
}

const onlyPost: Step = async (ctx, next) => {
  if (ctx.method === 'POST') return next();
  emptyReply(ctx, 405);
  ctx.set('Allow', 'POST');
};

/** Writes the reply: the result `dispatch` left, or the JSON-RPC error for whatever was thrown. */
function jsonRpcReplies(logger: Logger): Step {
  return async (ctx, next) => {
    const started = performance.now();
    const mcp = ctx.state.mcp;
    try {
      await next();
    } catch (err) {
      const reply = toJsonRpcError(err, mcp.id);
      if (reply.status >= 500 && !(err instanceof ProtocolError)) logger.error({ err }, 'request failed');
      respond(ctx, reply.status, reply.body);
    } finally {
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

function authenticate(controlPlane: ControlPlane): Step {
  return async (ctx, next) => {
    ctx.state.mcp.caller = await authenticateCaller(
      controlPlane,
      ctx.state.mcp.slug,
      ctx.get('authorization'),
    );
    await next();
  };
}

/** One message; a notification is accepted (202) and ends the request here. */
function readFrame(maxBodyBytes: number): Step {
  return async (ctx, next) => {
    const message = await readMessage(ctx.req, ctx.get('content-type'), maxBodyBytes);
    if (!('id' in message)) {
      ctx.state.mcp.status = 202;
      emptyReply(ctx, 202);
      return;
    }
    Object.assign(ctx.state.mcp, { message, id: message.id, method: message.method });
    await next();
  };
}

function dispatch(deps: McpEndpointDeps): Step {
  return async (ctx) => {
    const { message, caller, stream, id, method } = ctx.state.mcp;
    if (!message || !('id' in message) || !caller || id === null) throw new Error('dispatch out of order');
    if (REMOVED_METHODS.has(method) || !(GATEWAY_METHODS.has(method) || method === LISTEN)) {
      throw new ProtocolError('MethodNotFound', `Method not found: ${method}`);
    }
    const header = (name: string) => ctx.get(name);
    const meta = checkedEnvelope(message, header);
    if (method === LISTEN) {
      await deps.subscriptions.listen(id, message.params ?? {}, stream, ctx.res);
      return;
    }
    const controller = new AbortController();
    ctx.res.once('close', () => {
      if (!ctx.res.writableFinished) controller.abort();
    });
    const result = await deps.gateway.handle({
      ...caller,
      method,
      params: { ...message.params, _meta: meta },
      signal: controller.signal,
      notify: (n) => stream.notify(n),
      header: (name) => header(name) || undefined,
    });
    respond(ctx, 200, { jsonrpc: '2.0', id, result });
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
  if (status === 401) ctx.set('WWW-Authenticate', 'Bearer');
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
