/**
 * One HTTP exchange with a 2025-era upstream (Streamable HTTP, 2025-03-26 to 2025-11-25): the era's
 * headers (`MCP-Protocol-Version`, `Mcp-Session-Id`, no 2026 `Mcp-Method`/`Mcp-Name`), answers as JSON
 * or SSE, and what arrives on an SSE answer besides the response: notifications (relayed) and requests
 * the server sends the gateway (handed to `onRequest`, which answers them or stops reading).
 */
import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { request } from 'undici';
import type { JsonRpcErrorObject } from '../../protocol';
import { JsonRpcErrorObjectSchema } from '../../protocol';
import type { AnswerPreparation } from '../answer-parse';
import type { AnswerContexts } from '../answers';
import { readJsonAnswer, wasPrepared } from '../answers';
import type { UpstreamEndpoint } from '../endpoint';
import { AnswerPreparationRefused, UpstreamTransportError } from '../errors';
import type { JsonObject } from '../http';
import { isPlainObject, readSseMessages, sseBounds, transportError } from '../http';
import { isSessionLost, isVersionRefused } from './refusals';

/** Where a message goes: the upstream, and the session's version and id (none before `initialize`). */
export interface WireTarget {
  endpoint: UpstreamEndpoint;
  protocolVersion?: string;
  sessionId?: string | null;
}

/** A request the upstream sent on a stream. */
export interface ServerRequest {
  id: string | number;
  method: string;
  params?: JsonObject;
}

export interface ExchangeOptions {
  signal?: AbortSignal;
  /** A notification on the answer's stream; a promise it answers is awaited before reading on. */
  onNotification?: (message: JsonObject) => void | Promise<void>;
  /** A request the upstream sent on the answer's stream; answering true stops reading (`interrupted`). */
  onRequest?: (request: ServerRequest) => boolean | void;
  /** What a worker thread does to a large answer's result (UpstreamRequestOptions.prepare). */
  prepare?: AnswerPreparation;
  /** Headers of this one message besides the session's (W3C trace context). */
  headers?: Record<string, string>;
}

export type Exchange =
  /** 202: a notification or a response was taken. */
  | { kind: 'accepted' }
  | { kind: 'result'; result: JsonObject; sessionId?: string; prepared?: boolean }
  | { kind: 'error'; error: JsonRpcErrorObject; httpStatus: number }
  /** `onRequest` stopped reading at this request. */
  | { kind: 'interrupted'; request: ServerRequest }
  /** The SSE answer ended without the response. */
  | { kind: 'ended' }
  /** The upstream does not know (or wants) the session: 404, or 400 "No valid session ID". */
  | { kind: 'session-lost'; message: string }
  /** The upstream does not speak the version it was called with. */
  | { kind: 'version-refused'; message: string };

/** The dispatcher an endpoint's requests go through (its address may be held to the address policy). */
export type DispatcherFor = (endpoint: UpstreamEndpoint) => Dispatcher;

export class LegacyWire {
  /** `answers`: the bounds and parser each endpoint's answers are read with (answers.ts). */
  constructor(
    private readonly dispatcherFor: DispatcherFor,
    readonly answers: AnswerContexts,
  ) {}

  headers(target: WireTarget, accept = 'application/json, text/event-stream'): Record<string, string> {
    return {
      ...target.endpoint.headers,
      accept,
      ...(target.protocolVersion && { 'mcp-protocol-version': target.protocolVersion }),
      ...(target.sessionId && { 'mcp-session-id': target.sessionId }),
    };
  }

  /** Sends a request and reads its answer. */
  async request(
    target: WireTarget,
    method: string,
    params: JsonObject | undefined,
    opts: ExchangeOptions = {},
  ): Promise<Exchange> {
    const id = randomUUID();
    return this.post(target, { jsonrpc: '2.0', id, method, ...(params && { params }) }, id, opts);
  }

  /** Sends a notification, or a response to a request the upstream sent. */
  async deliver(target: WireTarget, message: JsonObject, signal?: AbortSignal): Promise<Exchange> {
    return this.post(target, { jsonrpc: '2.0', ...message }, undefined, signal ? { signal } : {});
  }

  /** Ends the session (`DELETE`); 405 and unknown sessions are fine. */
  async end(target: WireTarget): Promise<void> {
    if (!target.sessionId) return;
    const res = await request(target.endpoint.url, {
      method: 'DELETE',
      headers: this.headers(target, '*/*'),
      dispatcher: this.dispatcherFor(target.endpoint),
      signal: AbortSignal.timeout(5_000),
    });
    await res.body.dump();
  }

  /** Opens the session's standalone stream (`GET`); undefined when the upstream offers none. */
  async listen(target: WireTarget, signal: AbortSignal): Promise<AsyncIterable<Buffer> | undefined> {
    const res = await request(target.endpoint.url, {
      method: 'GET',
      headers: this.headers(target, 'text/event-stream'),
      dispatcher: this.dispatcherFor(target.endpoint),
      signal,
    });
    const type = String(res.headers['content-type'] ?? '');
    if (res.statusCode !== 200 || !type.startsWith('text/event-stream')) {
      await res.body.dump();
      return undefined;
    }
    return res.body;
  }

  private async post(
    target: WireTarget,
    message: JsonObject,
    id: string | undefined,
    opts: ExchangeOptions,
  ): Promise<Exchange> {
    const alias = target.endpoint.alias;
    let res: Dispatcher.ResponseData;
    try {
      res = await request(target.endpoint.url, {
        method: 'POST',
        headers: { ...opts.headers, ...this.headers(target), 'content-type': 'application/json' },
        body: JSON.stringify(message),
        dispatcher: this.dispatcherFor(target.endpoint),
        ...(opts.signal && { signal: opts.signal }),
      });
    } catch (err) {
      throw transportError(alias, err);
    }
    const status = res.statusCode;
    const sessionHeader = res.headers['mcp-session-id'];
    const sessionId = typeof sessionHeader === 'string' ? sessionHeader : undefined;
    const type =
      String(res.headers['content-type'] ?? '')
        .split(';')[0]
        ?.trim() ?? '';
    try {
      if (status === 202 || (id === undefined && status >= 200 && status < 300)) {
        await res.body.dump();
        return { kind: 'accepted' };
      }
      if (type === 'text/event-stream' && status === 200 && id !== undefined) {
        return await this.readStream(res.body, id, opts, sessionId, target.endpoint);
      }
      const answer = this.answers(target.endpoint, opts.prepare);
      const body: unknown = type === 'application/json' ? await readJsonAnswer(res, answer) : undefined;
      if (body === undefined) await res.body.dump();
      return prepared(classify(alias, status, type, body, id, sessionId), body);
    } catch (err) {
      res.body.destroy();
      if (
        err instanceof UpstreamTransportError ||
        err instanceof AnswerPreparationRefused ||
        opts.signal?.aborted
      )
        throw err;
      throw new UpstreamTransportError(
        `Upstream "${alias}" sent an unreadable response (HTTP ${status}${type ? `, ${type}` : ''})`,
        true,
        status,
      );
    }
  }

  private async readStream(
    body: AsyncIterable<Buffer>,
    id: string,
    opts: ExchangeOptions,
    sessionId: string | undefined,
    endpoint: UpstreamEndpoint,
  ): Promise<Exchange> {
    let outcome: Exchange | undefined;
    const read = (msg: JsonObject) => {
      if (msg.id === id && ('result' in msg || 'error' in msg)) {
        outcome = prepared(classify('', 200, 'application/json', msg, id, sessionId), msg);
        return true;
      }
      if (typeof msg.method !== 'string') return false;
      // The reader waits for a relay that waits (the client's socket is full) before reading on.
      if (!('id' in msg)) return opts.onNotification?.(msg);
      const request = serverRequest(msg);
      if (request && opts.onRequest?.(request) === true) {
        outcome = { kind: 'interrupted', request };
        return true;
      }
      return false;
    };
    await readSseMessages(body, read, sseBounds(this.answers(endpoint, opts.prepare), 'answer'));
    return outcome ?? { kind: 'ended' };
  }
}

/** A result whose message was prepared where it was parsed says so (answers.ts). */
function prepared(exchange: Exchange, message: unknown): Exchange {
  return exchange.kind === 'result' && wasPrepared(message) ? { ...exchange, prepared: true } : exchange;
}

export function serverRequest(msg: JsonObject): ServerRequest | undefined {
  const id = msg.id;
  if ((typeof id !== 'string' && typeof id !== 'number') || typeof msg.method !== 'string') return undefined;
  return { id, method: msg.method, ...(isPlainObject(msg.params) && { params: msg.params }) };
}

function classify(
  alias: string,
  status: number,
  type: string,
  body: unknown,
  id: string | undefined,
  sessionId: string | undefined,
): Exchange {
  const m = isPlainObject(body) ? body : {};
  const error = JsonRpcErrorObjectSchema.safeParse(m.error);
  if (error.success) {
    const { code, message } = error.data;
    if (status !== 200 && isSessionLost(status, message)) return { kind: 'session-lost', message };
    if (isVersionRefused(code, message)) return { kind: 'version-refused', message };
    if (status === 404) return { kind: 'session-lost', message };
    return { kind: 'error', error: error.data, httpStatus: status };
  }
  if (status === 404) return { kind: 'session-lost', message: 'HTTP 404' };
  if (status === 200 && m.id === id && isPlainObject(m.result)) {
    return { kind: 'result', result: m.result, ...(sessionId && { sessionId }) };
  }
  throw new UpstreamTransportError(
    `Upstream "${alias}" answered HTTP ${status}${type ? ` (${type})` : ''} without a JSON-RPC response`,
    true,
    status,
  );
}
