/**
 * One exchange with a 2025-era upstream (2025-03-26 to 2025-11-25) over the upstream's transport
 * (src/upstream/transport): a message of a session (its version and id, none before `initialize`), and
 * what arrives on the answer's stream besides the response: notifications (relayed) and requests the
 * server sends the gateway (handed to `onRequest`, which answers them or stops reading). The outcome is
 * classified in the era's terms: a lost session, a refused version.
 */
import { randomUUID } from 'node:crypto';
import type { JsonRpcErrorObject } from '../../../protocol';
import { JsonRpcErrorObjectSchema } from '../../../protocol';
import type { AnswerPreparation } from '../../answer-parse';
import type { AnswerContexts } from '../../answers';
import { wasPrepared } from '../../answers';
import type { UpstreamEndpoint } from '../../endpoint';
import { UpstreamTransportError } from '../../errors';
import type { JsonObject } from '../../http';
import { isPlainObject } from '../../http';
import type {
  MessageStream,
  TransportAnswer,
  TransportTarget,
  UpstreamTransport,
} from '../../transport/types';
import { STATUS } from '../../transport/types';
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
  /** How long the answer may stay silent (TransportSendOptions.quietMs). */
  quietMs?: number;
  /** Each point the answer could be resumed from: the request's id and the stream's last event id. */
  onResumePoint?: (point: { requestId: string; eventId: string }) => void;
  /** A notification on the answer's stream; a promise it answers is awaited before reading on. */
  onNotification?: (message: JsonObject) => void | Promise<void>;
  /**
   * A request the upstream sent on the answer's stream; answering true stops reading (`interrupted`), a
   * promise holds the reader until it settles (the request is being answered).
   */
  onRequest?: (request: ServerRequest) => boolean | void | Promise<void>;
  /** What a worker thread does to a large answer's result (UpstreamRequestOptions.prepare). */
  prepare?: AnswerPreparation;
  /** Metadata of this one message besides the session's (W3C trace context). */
  headers?: Record<string, string>;
}

export type Exchange =
  /** A notification or a response was taken. */
  | { kind: 'accepted' }
  | { kind: 'result'; result: JsonObject; sessionId?: string; prepared?: boolean }
  | { kind: 'error'; error: JsonRpcErrorObject; httpStatus: number }
  /** `onRequest` stopped reading at this request. */
  | { kind: 'interrupted'; request: ServerRequest }
  /** The answer's stream ended without the response. */
  | { kind: 'ended' }
  /** The upstream does not know (or wants) the session: unknown, or refused "No valid session ID". */
  | { kind: 'session-lost'; message: string }
  /** The upstream does not speak the version it was called with. */
  | { kind: 'version-refused'; message: string };

export class Era20251125Wire {
  /**
   * `answers`: the bounds and parser each endpoint's answers are read with (answers.ts). `lane`: the
   * transport's lane for every exchange of this wire (`stream` for list watches, which may stay quiet).
   */
  constructor(
    private readonly transport: UpstreamTransport,
    readonly answers: AnswerContexts,
    private readonly lane: 'call' | 'stream' = 'call',
  ) {}

  /** Sends a request and reads its answer. */
  async request(
    target: WireTarget,
    method: string,
    params: JsonObject | undefined,
    opts: ExchangeOptions = {},
  ): Promise<Exchange> {
    const id = randomUUID();
    let interrupted: ServerRequest | undefined;
    const answer = await this.transport
      .send(
        this.targetOf(target),
        { jsonrpc: '2.0', id, method, ...(params && { params }) },
        {
          signal: opts.signal,
          quietMs: opts.quietMs,
          headers: opts.headers,
          ...(opts.onResumePoint && {
            onEventId: (eventId: string) => opts.onResumePoint?.({ requestId: id, eventId }),
          }),
          answer: this.answers(target.endpoint, opts.prepare),
          onMessage: (msg) => {
            // The reader waits for a relay that waits (the client's socket is full) before reading on.
            if (!('id' in msg)) return opts.onNotification?.(msg);
            const request = serverRequest(msg);
            const handled = request ? opts.onRequest?.(request) : undefined;
            if (handled instanceof Promise) return handled.then(() => false);
            if (request && handled === true) {
              interrupted = request;
              return true;
            }
            return false;
          },
        },
      )
      .catch((err: unknown) => {
        if (opts.signal?.aborted && target.sessionId) this.cancelled(target, id);
        throw err;
      });
    if (answer.kind === 'stopped' && interrupted) return { kind: 'interrupted', request: interrupted };
    return this.outcome(target.endpoint, answer, id);
  }

  /**
   * Takes up the answer of a request sent earlier on this session, from after `eventId` (a stream the
   * upstream keeps with an event store): what the request's stream carried since, up to its response.
   * Requests the upstream sends on it are refused; notifications go to `onNotification`.
   */
  async resume(
    target: WireTarget,
    point: { requestId: string; eventId: string },
    opts: ExchangeOptions = {},
  ): Promise<Exchange> {
    const answer = await this.transport.resume(this.targetOf(target), point.requestId, point.eventId, {
      signal: opts.signal,
      quietMs: opts.quietMs,
      answer: this.answers(target.endpoint, opts.prepare),
      onEventId: (eventId) => opts.onResumePoint?.({ requestId: point.requestId, eventId }),
      onMessage: (msg) => {
        if (!('id' in msg)) return opts.onNotification?.(msg);
        const request = serverRequest(msg);
        const handled = request ? opts.onRequest?.(request) : undefined;
        return handled instanceof Promise ? handled.then(() => false) : false;
      },
    });
    return this.outcome(target.endpoint, answer, point.requestId);
  }

  /**
   * Tells the session's server that a request it may still be working on was cancelled (the client
   * went away, a hosted task was cancelled): a 2025 server learns it only this way, not from a closed
   * stream. Best effort, not awaited.
   */
  private cancelled(target: WireTarget, requestId: string): void {
    const note = {
      method: 'notifications/cancelled',
      params: { requestId, reason: 'The gateway cancelled the request' },
    };
    this.deliver(target, note).catch(() => {});
  }

  /** Sends a notification, or a response to a request the upstream sent. */
  async deliver(target: WireTarget, message: JsonObject, signal?: AbortSignal): Promise<Exchange> {
    const answer = await this.transport.send(
      this.targetOf(target),
      { jsonrpc: '2.0', ...message },
      { signal, answer: this.answers(target.endpoint) },
    );
    return this.outcome(target.endpoint, answer, undefined);
  }

  /** Ends the session; upstreams that keep none, and unknown sessions, are fine. */
  async end(target: WireTarget): Promise<void> {
    await this.transport.end(this.targetOf(target));
  }

  /** Opens the session's standalone stream; undefined when the upstream offers none. */
  async listen(target: WireTarget, signal: AbortSignal): Promise<MessageStream | undefined> {
    return this.transport.listen(this.targetOf(target), signal, this.answers(target.endpoint));
  }

  private targetOf(target: WireTarget): TransportTarget {
    return {
      endpoint: target.endpoint,
      session: { protocolVersion: target.protocolVersion, id: target.sessionId },
      lane: this.lane,
    };
  }

  private outcome(endpoint: UpstreamEndpoint, answer: TransportAnswer, id: string | undefined): Exchange {
    switch (answer.kind) {
      case 'accepted':
      case 'ended':
        return answer;
      case 'stopped':
        return { kind: 'ended' };
      default: {
        return prepared(classify(endpoint.alias, answer, id), answer.message);
      }
    }
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
  answer: Extract<TransportAnswer, { kind: 'message' }>,
  id: string | undefined,
): Exchange {
  const { status, sessionId, what, format } = answer;
  const m = isPlainObject(answer.message) ? answer.message : {};
  const error = JsonRpcErrorObjectSchema.safeParse(m.error);
  if (error.success) {
    const { code, message } = error.data;
    if (status !== STATUS.ok && isSessionLost(status, message)) return { kind: 'session-lost', message };
    if (isVersionRefused(code, message)) return { kind: 'version-refused', message };
    if (status === STATUS.unknown) return { kind: 'session-lost', message };
    return { kind: 'error', error: error.data, httpStatus: status };
  }
  if (status === STATUS.unknown) return { kind: 'session-lost', message: what };
  if (status === STATUS.ok && m.id === id && isPlainObject(m.result)) {
    return { kind: 'result', result: m.result, ...(sessionId && { sessionId }) };
  }
  throw new UpstreamTransportError(
    `Upstream "${alias}" answered ${what}${format ? ` (${format})` : ''} without a JSON-RPC response`,
    true,
    status,
  );
}
