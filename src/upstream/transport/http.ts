/**
 * The HTTP transport (MCP Streamable HTTP) behind the transport seam (types.ts): one POST per message,
 * answered with JSON or an SSE stream; for 2025-era sessions also the standalone `GET` stream and the
 * session's `DELETE`. Two bindings, as the revisions define them:
 *
 * - stateless 2026-07-28 requests (no `target.session`): headers mirror the body (`Mcp-Method`,
 *   `Mcp-Name`, `MCP-Protocol-Version` from `params._meta`); any answer that is not SSE is read as JSON;
 * - 2025-era session messages: `MCP-Protocol-Version` and `Mcp-Session-Id` from the session, the session
 *   id the upstream assigns read from the answer; 202 (or any 2xx to a notification) is `accepted`; only a
 *   200 SSE answer is read as a stream and only an `application/json` body as JSON.
 *
 * Connections: one pool per project upstream (pools.ts) for calls; shared agents without a body timeout
 * for streams that may stay quiet (`lane: 'stream'`). Both hold connections of upstreams whose address no
 * operator approved to the address policy (address-policy.ts).
 */
import type { buildConnector, Dispatcher } from 'undici';
import { request } from 'undici';
import { META, requestHeaders } from '../../protocol';
import type { AnswerContext } from '../answers';
import { readJsonAnswer } from '../answers';
import { AnswerPreparationRefused, UpstreamTransportError } from '../errors';
import type { JsonObject } from '../http';
import { isPlainObject, readSseMessages, sseBounds, transportError } from '../http';
import { upstreamDispatcher, UpstreamPools } from '../pools';
import type {
  MessageStream,
  TransportAnswer,
  TransportSendOptions,
  TransportTarget,
  UpstreamTransport,
} from './types';
import { STATUS } from './types';

export interface HttpTransportOptions {
  /** Longest wait for an answer's headers, and longest silence in a call's answer body (ms). */
  timeoutMs: number;
  /** One connection pool per project upstream (`upstreams.pool*`, pools.ts). */
  pools: { connections: number; idleMs: number; maxPools: number };
  /** The address policy's connector for addresses no operator approved; absent: no check (unit tests). */
  checkedConnect?: buildConnector.connector | undefined;
}

export class HttpTransport implements UpstreamTransport {
  private readonly pools: UpstreamPools;
  /**
   * For streams: long quiet stretches are normal, so no body timeout; one for addresses an operator
   * approved, one whose connections obey the address policy (the same without one).
   */
  private readonly streamAgents: { approved: Dispatcher; checked: Dispatcher };

  constructor(opts: HttpTransportOptions) {
    const { timeoutMs, checkedConnect } = opts;
    this.pools = new UpstreamPools({
      ...opts.pools,
      headersTimeoutMs: timeoutMs,
      bodyTimeoutMs: timeoutMs,
      ...(checkedConnect && { checkedConnect }),
    });
    // Shared: a stream holds its connection for as long as it is open, so these agents have no
    // connection cap to wait behind (the streams are bounded per caller where they are opened).
    const approved = upstreamDispatcher({ headersTimeoutMs: timeoutMs, bodyTimeoutMs: 0 });
    this.streamAgents = {
      approved,
      checked: checkedConnect
        ? upstreamDispatcher({ headersTimeoutMs: timeoutMs, bodyTimeoutMs: 0, connect: checkedConnect })
        : approved,
    };
  }

  async send(
    target: TransportTarget,
    message: JsonObject,
    opts: TransportSendOptions,
  ): Promise<TransportAnswer> {
    const { endpoint } = target;
    // A request is answered by its response; anything else (a notification, a response) is only taken.
    const id =
      typeof message.method === 'string' && (typeof message.id === 'string' || typeof message.id === 'number')
        ? message.id
        : undefined;
    const inSession = target.session !== undefined;
    let res: Dispatcher.ResponseData;
    try {
      res = await request(endpoint.url, {
        method: 'POST',
        headers: inSession
          ? { ...opts.headers, ...this.sessionHeaders(target), 'content-type': 'application/json' }
          : { ...endpoint.headers, ...opts.headers, ...mirrored(message) },
        body: JSON.stringify(message),
        dispatcher: this.dispatcherOf(target),
        ...(opts.signal && { signal: opts.signal }),
        ...(opts.quietMs !== undefined && { headersTimeout: opts.quietMs, bodyTimeout: opts.quietMs }),
      });
    } catch (err) {
      throw transportError(endpoint.alias, err);
    }
    const status = res.statusCode;
    const sessionHeader = res.headers['mcp-session-id'];
    const sessionId = typeof sessionHeader === 'string' ? sessionHeader : undefined;
    const format =
      String(res.headers['content-type'] ?? '')
        .split(';')[0]
        ?.trim() ?? '';
    const answered = (body: unknown): TransportAnswer => ({
      kind: 'message',
      message: body,
      status,
      ...(sessionId && { sessionId }),
      what: `HTTP ${status}`,
      format,
    });
    try {
      if (inSession && (status === STATUS.accepted || (id === undefined && status >= 200 && status < 300))) {
        await res.body.dump();
        return { kind: 'accepted' };
      }
      const stream = inSession
        ? format === 'text/event-stream' && status === STATUS.ok && id !== undefined
        : format.startsWith('text/event-stream');
      if (stream) {
        const read = await readAnswerStream(res.body, id, opts);
        return 'response' in read ? answered(read.response) : read;
      }
      if (inSession && format !== 'application/json') {
        await res.body.dump();
        return answered(undefined);
      }
      return answered(await readJsonAnswer(res, opts.answer));
    } catch (err) {
      res.body.destroy();
      if (
        err instanceof UpstreamTransportError ||
        err instanceof AnswerPreparationRefused ||
        (inSession && opts.signal?.aborted)
      )
        throw err;
      throw new UpstreamTransportError(
        `Upstream "${endpoint.alias}" sent an unreadable response (HTTP ${status}${format ? `, ${format}` : ''})`,
        true,
        status,
      );
    }
  }

  async listen(
    target: TransportTarget,
    signal: AbortSignal,
    answer: AnswerContext,
  ): Promise<MessageStream | undefined> {
    const res = await request(target.endpoint.url, {
      method: 'GET',
      headers: this.sessionHeaders(target, 'text/event-stream'),
      dispatcher: this.dispatcherOf(target),
      signal,
    });
    const type = String(res.headers['content-type'] ?? '');
    if (res.statusCode !== STATUS.ok || !type.startsWith('text/event-stream')) {
      await res.body.dump();
      return undefined;
    }
    return { read: (onMessage) => readSseMessages(res.body, onMessage, sseBounds(answer, 'notifications')) };
  }

  async resume(
    target: TransportTarget,
    requestId: string | number,
    lastEventId: string,
    opts: TransportSendOptions,
  ): Promise<TransportAnswer> {
    const { endpoint } = target;
    let res: Dispatcher.ResponseData;
    try {
      res = await request(endpoint.url, {
        method: 'GET',
        headers: { ...this.sessionHeaders(target, 'text/event-stream'), 'last-event-id': lastEventId },
        dispatcher: this.dispatcherOf(target),
        ...(opts.signal && { signal: opts.signal }),
        ...(opts.quietMs !== undefined && { headersTimeout: opts.quietMs, bodyTimeout: opts.quietMs }),
      });
    } catch (err) {
      throw transportError(endpoint.alias, err);
    }
    const format = String(res.headers['content-type'] ?? '');
    if (res.statusCode !== STATUS.ok || !format.startsWith('text/event-stream')) {
      await res.body.dump();
      return {
        kind: 'message',
        message: undefined,
        status: res.statusCode,
        what: `HTTP ${res.statusCode}`,
        format,
      };
    }
    try {
      const read = await readAnswerStream(res.body, requestId, opts);
      return 'response' in read
        ? { kind: 'message', message: read.response, status: STATUS.ok, what: 'HTTP 200', format }
        : read;
    } catch (err) {
      res.body.destroy();
      throw err;
    }
  }

  async end(target: TransportTarget): Promise<void> {
    if (!target.session?.id) return;
    const res = await request(target.endpoint.url, {
      method: 'DELETE',
      headers: this.sessionHeaders(target, '*/*'),
      dispatcher: this.dispatcherOf(target),
      signal: AbortSignal.timeout(5_000),
    });
    await res.body.dump();
  }

  async close(): Promise<void> {
    for (const d of new Set([this.streamAgents.approved, this.streamAgents.checked])) await d.destroy();
    await this.pools.close();
  }

  private dispatcherOf(target: TransportTarget): Dispatcher {
    if (target.lane !== 'stream') return this.pools.for(target.endpoint);
    return target.endpoint.addressApproved === true ? this.streamAgents.approved : this.streamAgents.checked;
  }

  /** A 2025-era session's headers: the endpoint's own, what it accepts, its version and id. */
  private sessionHeaders(
    target: TransportTarget,
    accept = 'application/json, text/event-stream',
  ): Record<string, string> {
    const { protocolVersion, id } = target.session ?? {};
    return {
      ...target.endpoint.headers,
      accept,
      ...(protocolVersion && { 'mcp-protocol-version': protocolVersion }),
      ...(id && { 'mcp-session-id': id }),
    };
  }
}

/** A 2026-07-28 request's headers mirror its body (method, name, version from `_meta`). */
function mirrored(message: JsonObject): Record<string, string> {
  const params = isPlainObject(message.params) ? message.params : {};
  const meta = isPlainObject(params._meta) ? params._meta : {};
  return requestHeaders(String(message.method), params, String(meta[META.protocolVersion]));
}

/** Reads an SSE answer until the response with `id` arrives; other messages go to `onMessage`. */
async function readAnswerStream(
  body: AsyncIterable<Buffer>,
  id: string | number | undefined,
  opts: TransportSendOptions,
): Promise<{ response: JsonObject } | { kind: 'stopped' } | { kind: 'ended' }> {
  let response: JsonObject | undefined;
  const read = (msg: JsonObject) => {
    if (msg.id === id && ('result' in msg || 'error' in msg)) {
      response = msg;
      return true;
    }
    if (typeof msg.method !== 'string') return false;
    // The reader waits for a relay that waits (the client's socket is full) before reading on.
    return opts.onMessage?.(msg);
  };
  const stopped = await readSseMessages(
    body,
    read,
    sseBounds(opts.answer, opts.carries ?? 'answer'),
    opts.onEventId,
  );
  if (response) return { response };
  return stopped ? { kind: 'stopped' } : { kind: 'ended' };
}
