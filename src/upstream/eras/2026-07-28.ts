/**
 * The 2026-07-28 hop: one stateless JSON-RPC request, answered with one message or a stream of them
 * ending with the response, over the upstream's transport (src/upstream/transport; HTTP mirrors the body
 * in headers as 2026-07-28 requires).
 */
import { randomUUID } from 'node:crypto';
import type { JsonRpcErrorObject, Meta } from '../../protocol';
import { JsonRpcErrorObjectSchema } from '../../protocol';
import type { AnswerContexts } from '../answers';
import { wasPrepared } from '../answers';
import type { UpstreamEndpoint, UpstreamReply, UpstreamRequestOptions } from '../endpoint';
import { UpstreamTransportError } from '../errors';
import type { JsonObject } from '../http';
import { isPlainObject } from '../http';
import type { UpstreamTransport } from '../transport/types';

/**
 * Sends one request. `params._meta` must already hold the per-request envelope for this hop.
 * Resolves with the result or the JSON-RPC error; rejects with UpstreamTransportError otherwise (an
 * answer past its bounds: UpstreamAnswerTooLarge), or AnswerPreparationRefused. `answers` says how the
 * answer is read (answers.ts). `carries`: whether the answer's streamed messages may carry the response,
 * or only notifications (`subscriptions/listen`, whose final result is small; sent on the transport's
 * `stream` lane, which never cuts a quiet stream).
 */
export async function sendEra20260728(
  transport: UpstreamTransport,
  endpoint: UpstreamEndpoint,
  method: string,
  params: Record<string, unknown> & { _meta: Meta },
  opts: UpstreamRequestOptions & { answers: AnswerContexts; carries?: 'answer' | 'notifications' },
): Promise<UpstreamReply> {
  const id = randomUUID();
  const carries = opts.carries ?? 'answer';
  const relay = opts.onNotification;
  const answer = await transport.send(
    { endpoint, lane: carries === 'notifications' ? 'stream' : 'call' },
    { jsonrpc: '2.0', id, method, params },
    {
      signal: opts.signal,
      quietMs: opts.deadline?.ms,
      headers: { ...opts.headers, ...opts.traceHeaders },
      answer: opts.answers(endpoint, opts.prepare),
      carries,
      // Notifications are relayed (a promise the relay answers holds the reader); requests are not ours.
      onMessage: (msg) => (!('id' in msg) ? relay?.(msg) : false),
    },
  );
  if (answer.kind !== 'message')
    throw new UpstreamTransportError(
      `Upstream "${endpoint.alias}" ended its answer without a response`,
      true,
    );
  const { message, status } = answer;
  const reply = asReply(message, id);
  if (!reply) {
    // A refusal in another framing (a 2025-era server's transport errors have no id) still says why.
    const error = isPlainObject(message) && isPlainObject(message.error) ? message.error.message : undefined;
    throw new UpstreamTransportError(
      `Upstream "${endpoint.alias}" answered ${answer.what} without a JSON-RPC response${typeof error === 'string' ? `: ${error}` : ''}`,
      true,
      status,
    );
  }
  if (reply.kind === 'error') return { ...reply, httpStatus: status };
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
