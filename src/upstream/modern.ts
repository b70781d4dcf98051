/**
 * The 2026-07-28 hop: one JSON-RPC request per POST, answered with JSON or an SSE stream. Headers mirror
 * the body as 2026-07-28 requires.
 */
import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { request } from 'undici';
import type { JsonRpcErrorObject, Meta } from '../protocol';
import { JsonRpcErrorObjectSchema, META, requestHeaders } from '../protocol';
import type { AnswerContext, AnswerContexts } from './answers';
import { readJsonAnswer, wasPrepared } from './answers';
import type { UpstreamEndpoint, UpstreamReply, UpstreamRequestOptions } from './endpoint';
import { AnswerPreparationRefused, UpstreamTransportError } from './errors';
import type { JsonObject } from './http';
import { isPlainObject, readSseMessages, sseBounds, transportError } from './http';

/**
 * Sends one request. `params._meta` must already hold the per-request envelope for this hop.
 * Resolves with the result or the JSON-RPC error; rejects with UpstreamTransportError otherwise (an
 * answer past its bounds: UpstreamAnswerTooLarge), or AnswerPreparationRefused. `answers` says how the
 * answer is read (answers.ts). `carries`: whether the answer's SSE events may carry the response, or
 * only notifications (`subscriptions/listen`, whose final result is small).
 */
export async function sendModern(
  dispatcher: Dispatcher,
  endpoint: UpstreamEndpoint,
  method: string,
  params: Record<string, unknown> & { _meta: Meta },
  opts: UpstreamRequestOptions & { answers: AnswerContexts; carries?: 'answer' | 'notifications' },
): Promise<UpstreamReply> {
  const id = randomUUID();
  const body = JSON.stringify({ jsonrpc: '2.0', id, method, params });
  const headers: Record<string, string> = {
    ...endpoint.headers,
    ...opts.headers,
    ...opts.traceHeaders,
    ...requestHeaders(method, params, String(params._meta[META.protocolVersion])),
  };

  let res: Dispatcher.ResponseData;
  try {
    res = await request(endpoint.url, {
      method: 'POST',
      headers,
      body,
      dispatcher,
      ...(opts.signal && { signal: opts.signal }),
    });
  } catch (err) {
    throw transportError(endpoint.alias, err);
  }

  const contentType = String(res.headers['content-type'] ?? '');
  const answer = opts.answers(endpoint, opts.prepare);
  let message: unknown;
  try {
    message = contentType.startsWith('text/event-stream')
      ? await readSseResponse(res.body, id, answer, opts.carries ?? 'answer', opts.onNotification)
      : await readJsonAnswer(res, answer);
  } catch (err) {
    res.body.destroy();
    if (err instanceof UpstreamTransportError || err instanceof AnswerPreparationRefused) throw err;
    throw new UpstreamTransportError(
      `Upstream "${endpoint.alias}" sent an unreadable response (HTTP ${res.statusCode}${contentType ? `, ${contentType.split(';')[0]}` : ''})`,
      true,
      res.statusCode,
    );
  }
  const reply = asReply(message, id);
  if (!reply) {
    // A refusal in another framing (a 2025-era server's transport errors have no id) still says why.
    const error = isPlainObject(message) && isPlainObject(message.error) ? message.error.message : undefined;
    throw new UpstreamTransportError(
      `Upstream "${endpoint.alias}" answered HTTP ${res.statusCode} without a JSON-RPC response${typeof error === 'string' ? `: ${error}` : ''}`,
      true,
      res.statusCode,
    );
  }
  if (reply.kind === 'error') return { ...reply, httpStatus: res.statusCode };
  return wasPrepared(message) ? { ...reply, prepared: true } : reply;
}

/**
 * The response frame, checked by hand: results are relayed, not interpreted here, so a schema walk over
 * a possibly large result would be pure cost on the hot path. The error object is validated strictly.
 */
export function asReply(
  message: unknown,
  id: string,
): { kind: 'result'; result: JsonObject } | { kind: 'error'; error: JsonRpcErrorObject } | undefined {
  if (!isPlainObject(message)) return undefined;
  const m = message;
  if (m.jsonrpc !== '2.0' || (m.id !== id && m.id !== null)) return undefined;
  if (isPlainObject(m.result) && m.error === undefined) return { kind: 'result', result: m.result };
  const error = JsonRpcErrorObjectSchema.safeParse(m.error);
  return error.success && m.result === undefined ? { kind: 'error', error: error.data } : undefined;
}

/** Reads an SSE response until the JSON-RPC response with our id arrives; relays notifications. */
async function readSseResponse(
  body: AsyncIterable<Buffer>,
  id: string,
  answer: AnswerContext,
  carries: 'answer' | 'notifications',
  onNotification?: (message: JsonObject) => void | Promise<void>,
): Promise<unknown> {
  let response: unknown;
  const read = (msg: JsonObject) => {
    if (msg.id === id && ('result' in msg || 'error' in msg)) {
      response = msg;
      return true;
    }
    // The reader waits for a relay that waits (the client's socket is full) before reading on.
    if (typeof msg.method === 'string' && !('id' in msg)) return onNotification?.(msg);
    return false;
  };
  await readSseMessages(body, read, sseBounds(answer, carries));
  if (response === undefined) throw new UpstreamTransportError('SSE stream ended without a response', true);
  return response;
}
