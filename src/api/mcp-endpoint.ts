/**
 * `POST /v1/mcp/{projectSlug}`: MCP Streamable HTTP, protocol 2026-07-28 (stateless). Frames, envelope
 * and headers are validated here, in the order the spec's error codes imply; the gateway does the rest.
 */
import type { Context } from 'koa';
import type { Logger } from 'pino';
import getRawBody from 'raw-body';
import type { McpGateway } from '../gateway/gateway';
import { GATEWAY_METHODS } from '../gateway/gateway';
import type { ProjectRegistry } from '../gateway/projects';
import type { JsonRpcRequest, RequestId, RequestMeta } from '../protocol';
import {
  decodeHeaderValue,
  HEADER,
  JsonRpcClientMessageSchema,
  META,
  nameFieldFor,
  ProtocolError,
  REMOVED_METHODS,
  RequestMetaSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '../protocol';
import type { Caller } from '../store/task-store';
import { toJsonRpcError } from './errors';
import type { OriginPolicy } from './origin';
import { refuseOrigin } from './origin';
import { ResponseStream } from './response-stream';
import type { Subscriptions } from './subscriptions';

export interface McpEndpointDeps {
  gateway: McpGateway;
  projects: ProjectRegistry;
  logger: Logger;
  maxBodyBytes: number;
  origin: OriginPolicy;
  subscriptions: Subscriptions;
}

const ANONYMOUS: Caller = { kind: 'anonymous', id: 'anonymous' };
const LISTEN = 'subscriptions/listen';

export function mcpEndpoint(deps: McpEndpointDeps) {
  return async (ctx: Context, slug: string): Promise<void> => {
    if (ctx.method !== 'POST') {
      ctx.status = 405;
      ctx.set('Allow', 'POST');
      return;
    }
    let id: RequestId | null = null;
    let method = '';
    const started = performance.now();
    const stream = new ResponseStream(ctx.res, ctx.get('accept').includes('text/event-stream'));
    try {
      const refused = refuseOrigin(deps.origin, ctx.get('host'), ctx.get('origin'));
      if (refused) throw new ProtocolError('Forbidden', refused);
      const project = deps.projects.get(slug);
      if (!project) throw new ProtocolError('ProjectNotFound', `Project "${slug}" not found`);
      const message = await readMessage(ctx, deps.maxBodyBytes);
      if (!('id' in message)) {
        ctx.status = 202; // notifications: accepted, nothing to answer
        return;
      }
      id = message.id;
      method = message.method;
      if (REMOVED_METHODS.has(method) || !(GATEWAY_METHODS.has(method) || method === LISTEN)) {
        throw new ProtocolError('MethodNotFound', `Method not found: ${method}`);
      }
      const meta = validateEnvelope(message);
      // Header and body must agree before the version itself is judged: a supported header over an
      // unsupported body version is a mismatch (-32020), not an unsupported version.
      validateHeaders(ctx, message, meta);
      validateVersion(meta);
      if (method === LISTEN) {
        ctx.respond = false;
        await deps.subscriptions.listen(id, message.params ?? {}, stream, ctx.res);
        return;
      }
      const controller = new AbortController();
      ctx.res.once('close', () => {
        if (!ctx.res.writableFinished) controller.abort();
      });
      const result = await deps.gateway.handle({
        project,
        caller: ANONYMOUS,
        method,
        params: { ...message.params, _meta: meta },
        signal: controller.signal,
        notify: (n) => stream.notify(n),
        header: (name) => ctx.get(name) || undefined,
      });
      respond(ctx, stream, 200, { jsonrpc: '2.0', id, result });
    } catch (err) {
      const { status, body } = toJsonRpcError(err, id);
      if (status >= 500 && !(err instanceof ProtocolError)) deps.logger.error({ err }, 'request failed');
      respond(ctx, stream, status, body);
    } finally {
      deps.logger.debug(
        { project: slug, method, status: ctx.status, ms: Math.round(performance.now() - started) },
        'mcp request',
      );
    }
  };
}

/** Writes the final message: as the last SSE event if the stream was opened, else as JSON. */
function respond(ctx: Context, stream: ResponseStream, status: number, body: Record<string, unknown>): void {
  if (stream.isStreaming) {
    ctx.respond = false;
    stream.finish(body);
    return;
  }
  ctx.status = status;
  ctx.body = body;
}

async function readMessage(ctx: Context, limit: number) {
  if (!ctx.is('application/json')) {
    throw new ProtocolError('UnsupportedMediaType', 'Content-Type must be application/json');
  }
  let raw: string;
  try {
    raw = await getRawBody(ctx.req, { limit, encoding: 'utf8' });
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large') {
      throw new ProtocolError('PayloadTooLarge', `Request body exceeds ${limit} bytes`);
    }
    throw new ProtocolError('InvalidRequest', 'Could not read the request body');
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new ProtocolError('ParseError', 'Parse error');
  }
  const parsed = JsonRpcClientMessageSchema.safeParse(json);
  if (!parsed.success) {
    if (Array.isArray(json)) throw new ProtocolError('InvalidRequest', 'Batches are not supported');
    throw new ProtocolError('InvalidRequest', 'Invalid JSON-RPC message');
  }
  return parsed.data;
}

function validateEnvelope(message: JsonRpcRequest): RequestMeta {
  const meta = RequestMetaSchema.safeParse(message.params?._meta);
  if (!meta.success) {
    throw new ProtocolError(
      'MissingRequestMeta',
      `params._meta must carry ${META.protocolVersion} and ${META.clientCapabilities}`,
    );
  }
  return meta.data;
}

function validateVersion(meta: RequestMeta): void {
  const requested = meta[META.protocolVersion];
  if (!SUPPORTED_PROTOCOL_VERSIONS.includes(requested)) {
    throw new ProtocolError('UnsupportedProtocolVersion', 'Unsupported protocol version', {
      supported: [...SUPPORTED_PROTOCOL_VERSIONS],
      requested,
    });
  }
}

/** Headers that repeat body fields must be present and equal (after decoding). */
function validateHeaders(ctx: Context, message: JsonRpcRequest, meta: RequestMeta): void {
  const check = (header: string, expected: string, label: string) => {
    const raw = ctx.get(header);
    if (raw === '') throw new ProtocolError('HeaderMismatch', `Missing ${label} header`);
    if (decodeHeaderValue(raw) !== expected) {
      throw new ProtocolError('HeaderMismatch', `${label} header does not match the request body`);
    }
  };
  check(HEADER.protocolVersion, meta[META.protocolVersion], 'MCP-Protocol-Version');
  check(HEADER.method, message.method, 'Mcp-Method');
  const field = nameFieldFor(message.method);
  const value = field ? message.params?.[field] : undefined;
  if (field && typeof value === 'string') check(HEADER.name, value, 'Mcp-Name');
}
