/**
 * `POST /v1/mcp/{projectSlug}`: MCP Streamable HTTP, protocol 2026-07-28 (stateless). Frames, envelope
 * and headers are validated here, in the order the spec's error codes imply; the gateway does the rest.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { McpGateway } from '../gateway/gateway';
import { GATEWAY_METHODS } from '../gateway/gateway';
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
import type { ControlPlane } from '../store/control-plane/types';
import { authenticateCaller } from './authenticate';
import { toJsonRpcError } from './errors';
import type { OriginPolicy } from './origin';
import { refuseOrigin } from './origin';
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

const LISTEN = 'subscriptions/listen';

/**
 * The endpoint runs on plain `node:http` request/response objects: it is the gateway's hot path, and a
 * framework's per-request context costs more than everything the gateway itself decides.
 */
export function mcpEndpoint(deps: McpEndpointDeps) {
  return async (req: IncomingMessage, res: ServerResponse, slug: string): Promise<void> => {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const header = (name: string): string => {
      const v = req.headers[name];
      return (Array.isArray(v) ? v[0] : v) ?? '';
    };
    let id: RequestId | null = null;
    let method = '';
    let status = 200;
    const started = performance.now();
    const stream = new ResponseStream(res, header('accept').includes('text/event-stream'));
    try {
      const refused = refuseOrigin(deps.origin, header('host'), header('origin'));
      if (refused) throw new ProtocolError('Forbidden', refused);
      const { project, principal } = await authenticateCaller(
        deps.controlPlane,
        slug,
        header('authorization'),
      );
      const message = await readMessage(req, header('content-type'), deps.maxBodyBytes);
      if (!('id' in message)) {
        status = 202; // notifications: accepted, nothing to answer
        res.writeHead(202).end();
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
      validateHeaders(header, message, meta);
      validateVersion(meta);
      if (method === LISTEN) {
        await deps.subscriptions.listen(id, message.params ?? {}, stream, res);
        return;
      }
      const controller = new AbortController();
      res.once('close', () => {
        if (!res.writableFinished) controller.abort();
      });
      const result = await deps.gateway.handle({
        project,
        principal,
        method,
        params: { ...message.params, _meta: meta },
        signal: controller.signal,
        notify: (n) => stream.notify(n),
        header: (name) => header(name) || undefined,
      });
      respond(res, stream, 200, { jsonrpc: '2.0', id, result });
    } catch (err) {
      const reply = toJsonRpcError(err, id);
      status = reply.status;
      if (status >= 500 && !(err instanceof ProtocolError)) deps.logger.error({ err }, 'request failed');
      respond(res, stream, status, reply.body);
    } finally {
      deps.logger.debug(
        { project: slug, method, status, ms: Math.round(performance.now() - started) },
        'mcp request',
      );
    }
  };
}

/** Writes the final message: as the last SSE event if the stream was opened, else as JSON. */
function respond(
  res: ServerResponse,
  stream: ResponseStream,
  status: number,
  body: Record<string, unknown>,
): void {
  if (stream.isStreaming) {
    stream.finish(body);
    return;
  }
  if (res.headersSent || res.destroyed) return;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (status === 401) headers['www-authenticate'] = 'Bearer';
  res.writeHead(status, headers).end(JSON.stringify(body));
}

async function readMessage(req: IncomingMessage, contentType: string, limit: number) {
  if (contentType.split(';')[0]?.trim().toLowerCase() !== 'application/json') {
    throw new ProtocolError('UnsupportedMediaType', 'Content-Type must be application/json');
  }
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) throw new ProtocolError('PayloadTooLarge', `Request body exceeds ${limit} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new ProtocolError('PayloadTooLarge', `Request body exceeds ${limit} bytes`);
    chunks.push(chunk);
  }
  let json: unknown;
  try {
    json = JSON.parse(Buffer.concat(chunks, size).toString('utf8'));
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
function validateHeaders(header: (name: string) => string, message: JsonRpcRequest, meta: RequestMeta): void {
  const check = (name: string, expected: string, label: string) => {
    const raw = header(name);
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
