/**
 * The gateway's MCP client toward upstream servers: one JSON-RPC request per POST, answered with JSON
 * or an SSE stream. Headers mirror the body as 2026-07-28 requires.
 */
import { randomUUID } from 'node:crypto';
import { createParser } from 'eventsource-parser';
import type { Dispatcher } from 'undici';
import { Agent, request } from 'undici';
import type { JsonRpcErrorObject, Meta } from '../protocol';
import { JsonRpcErrorObjectSchema, META, requestHeaders } from '../protocol';
import { UpstreamTransportError } from './errors';

export interface UpstreamEndpoint {
  alias: string;
  url: string;
  headers?: Record<string, string>;
  /**
   * Identifies the upstream *and the credential* for caches (discovery, catalog): what an upstream
   * offers may depend on whose credential asks. Defaults to the URL.
   */
  cacheKey?: string;
}

export type UpstreamReply =
  | { kind: 'result'; result: Record<string, unknown> }
  | { kind: 'error'; error: JsonRpcErrorObject; httpStatus: number };

export interface UpstreamRequestOptions {
  signal?: AbortSignal;
  /** Extra request headers for this call (e.g. `Mcp-Param-*` derived from the upstream's schema). */
  headers?: Record<string, string>;
  /** Called for notifications (e.g. progress) that arrive on the request's SSE stream. */
  onNotification?: (message: Record<string, unknown>) => void;
}

/** Connection errors raised before any byte of the request could have been sent. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

export class UpstreamClient {
  private readonly dispatcher: Dispatcher;

  constructor(opts: { timeoutMs?: number; connections?: number } = {}) {
    const timeout = opts.timeoutMs ?? 60_000;
    this.dispatcher = new Agent({
      connections: opts.connections ?? 128,
      headersTimeout: timeout,
      bodyTimeout: timeout,
      keepAliveTimeout: 10_000,
    });
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }

  /**
   * Sends one request. `params._meta` must already hold the per-request envelope for this hop.
   * Resolves with the result or the JSON-RPC error; rejects with UpstreamTransportError otherwise.
   */
  async send(
    endpoint: UpstreamEndpoint,
    method: string,
    params: Record<string, unknown> & { _meta: Meta },
    opts: UpstreamRequestOptions = {},
  ): Promise<UpstreamReply> {
    const id = randomUUID();
    const body = JSON.stringify({ jsonrpc: '2.0', id, method, params });
    const headers: Record<string, string> = {
      ...endpoint.headers,
      ...opts.headers,
      ...requestHeaders(method, params, String(params._meta[META.protocolVersion])),
    };

    let res: Dispatcher.ResponseData;
    try {
      res = await request(endpoint.url, {
        method: 'POST',
        headers,
        body,
        dispatcher: this.dispatcher,
        ...(opts.signal && { signal: opts.signal }),
      });
    } catch (err) {
      throw transportError(endpoint, err);
    }

    const contentType = String(res.headers['content-type'] ?? '');
    let message: unknown;
    try {
      message = contentType.startsWith('text/event-stream')
        ? await readSseResponse(res.body, id, opts.onNotification)
        : await res.body.json();
    } catch (err) {
      res.body.destroy();
      if (err instanceof UpstreamTransportError) throw err;
      throw new UpstreamTransportError(
        `Upstream "${endpoint.alias}" sent an unreadable response (HTTP ${res.statusCode})`,
        true,
        res.statusCode,
      );
    }
    const reply = asReply(message, id);
    if (!reply) {
      throw new UpstreamTransportError(
        `Upstream "${endpoint.alias}" answered HTTP ${res.statusCode} without a JSON-RPC response`,
        true,
        res.statusCode,
      );
    }
    return reply.kind === 'error' ? { ...reply, httpStatus: res.statusCode } : reply;
  }
}

/**
 * The response frame, checked by hand: results are relayed, not interpreted here, so a schema walk over
 * a possibly large result would be pure cost on the hot path. The error object is validated strictly.
 */
function asReply(
  message: unknown,
  id: string,
):
  | { kind: 'result'; result: Record<string, unknown> }
  | { kind: 'error'; error: JsonRpcErrorObject }
  | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const m = message as Record<string, unknown>;
  if (m.jsonrpc !== '2.0' || (m.id !== id && m.id !== null)) return undefined;
  if (isPlainObject(m.result) && m.error === undefined) return { kind: 'result', result: m.result };
  const error = JsonRpcErrorObjectSchema.safeParse(m.error);
  return error.success && m.result === undefined ? { kind: 'error', error: error.data } : undefined;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function transportError(endpoint: UpstreamEndpoint, err: unknown): UpstreamTransportError {
  const code = (err as { code?: string }).code ?? '';
  const reason = err instanceof Error ? err.message : String(err);
  return new UpstreamTransportError(
    `Upstream "${endpoint.alias}" is unreachable: ${reason}`,
    !NOT_SENT_CODES.has(code),
  );
}

/** Reads an SSE response until the JSON-RPC response with our id arrives; relays notifications. */
async function readSseResponse(
  body: AsyncIterable<Buffer>,
  id: string,
  onNotification?: (message: Record<string, unknown>) => void,
): Promise<unknown> {
  let response: unknown;
  const parser = createParser({
    onEvent(event) {
      if (response !== undefined) return;
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(event.data) as Record<string, unknown>;
      } catch {
        return; // keep-alive noise or a non-JSON event: ignore, as clients must
      }
      if (msg.id === id && ('result' in msg || 'error' in msg)) response = msg;
      else if (typeof msg.method === 'string' && !('id' in msg)) onNotification?.(msg);
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    if (response !== undefined) break;
  }
  if (response === undefined) throw new UpstreamTransportError('SSE stream ended without a response', true);
  return response;
}
