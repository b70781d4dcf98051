/**
 * The transport seam: how the era adapters (src/upstream/eras) move JSON-RPC messages to an upstream and
 * back, without knowing how. HTTP (Streamable HTTP, http.ts) is the one implementation today; a stdio
 * transport goes behind the same interface. Modelled on the MCP TypeScript SDK v2 client `Transport`,
 * but request-shaped: each request's answer (a single message, or a stream of messages ending with the
 * response) belongs to that request, which is how the gateway relays, bounds and cancels it.
 *
 * The vocabulary is the transport's own: an era adapter never sees a status line, a header or an event
 * id. `status` uses HTTP's numbers because they are the common vocabulary of MCP transports' refusals
 * (a transport without statuses answers `OK`); the session id is `TransportAnswer.sessionId`, whatever
 * carries it.
 */
import type { AnswerContext } from '../answers';
import type { UpstreamEndpoint } from '../endpoint';
import type { JsonObject } from '../http';

/** Statuses an exchange can end with (HTTP's numbers; see the module comment). */
export const STATUS = {
  ok: 200,
  accepted: 202,
  /** Refused before it was processed (a malformed or unacceptable message). */
  refused: 400,
  unauthorized: 401,
  forbidden: 403,
  /** The session (or the endpoint) is unknown to the upstream. */
  unknown: 404,
} as const;

/**
 * Where a message goes. `session` absent: a stateless 2026-07-28 request (each request carries its
 * version in `params._meta`). Present: a message of a 2025-era session, with its negotiated version and
 * id (both absent before `initialize` answered).
 */
export interface TransportTarget {
  endpoint: UpstreamEndpoint;
  session?: { protocolVersion?: string | undefined; id?: string | null | undefined };
  /**
   * `stream`: the exchange may stay quiet for long stretches (a listen stream, a list watch's session),
   * so it is never cut for silence. Default `call`: the upstream's own bounded connections.
   */
  lane?: 'call' | 'stream';
}

export interface TransportSendOptions {
  signal?: AbortSignal | undefined;
  /** Metadata of this one message besides what the transport derives (trace context, `Mcp-Param-*`). */
  headers?: Record<string, string> | undefined;
  /** How the answer is read: bounds, parser, preparation (answers.ts). */
  answer: AnswerContext;
  /**
   * How long the answer may stay silent (ms): waiting for it to begin, and between its parts. Absent: the
   * transport's own timeout. A hosted call's answer may take as long as its deadline allows.
   */
  quietMs?: number | undefined;
  /** Each event id the answer's stream sets, once its event was handled: where a resumption starts. */
  onEventId?: ((id: string) => void) | undefined;
  /** Whether the answer's streamed messages may carry the response, or only notifications (a listen). */
  carries?: 'answer' | 'notifications';
  /**
   * Each message on the answer's stream that is not the response (notifications, requests the upstream
   * sends). Answering true stops reading (`stopped`); a promise is awaited before reading on, so a relay
   * that waits holds the upstream back.
   */
  onMessage?: (message: JsonObject) => boolean | void | Promise<boolean | void>;
}

export type TransportAnswer =
  /** The message was taken; nothing answers it on this exchange (a notification, a response). */
  | { kind: 'accepted' }
  /**
   * What came back: the response to the request (matched by id), or whatever message the upstream
   * answered with instead (`undefined` when it was no JSON at all). `status`: see STATUS. `sessionId`:
   * the session the upstream assigned or confirmed. `what`/`format`: how to name the answer in errors.
   */
  | {
      kind: 'message';
      message: unknown;
      status: number;
      sessionId?: string;
      what: string;
      format: string;
    }
  /** `onMessage` stopped reading. */
  | { kind: 'stopped' }
  /** The answer's stream ended without the response. */
  | { kind: 'ended' };

/** A standalone stream of messages the upstream sends a session (no request of ours answered by it). */
export interface MessageStream {
  /** Feeds each message to `onMessage` until it answers true or the stream ends; answers whether it stopped. */
  read(onMessage: (message: JsonObject) => boolean | void | Promise<boolean | void>): Promise<boolean>;
}

export interface UpstreamTransport {
  /**
   * Sends one JSON-RPC message. A request (`id` present) is answered by its response, read as
   * `opts.answer` says; a notification or response is `accepted`. Rejects with UpstreamTransportError
   * when the message could not be delivered or the answer could not be read (with `mayHaveReached`).
   */
  send(target: TransportTarget, message: JsonObject, opts: TransportSendOptions): Promise<TransportAnswer>;
  /**
   * Opens the session's standalone stream of messages; undefined when the upstream offers none.
   * `answer`: the bounds its messages are read under (a notifications stream's).
   */
  listen(
    target: TransportTarget,
    signal: AbortSignal,
    answer: AnswerContext,
  ): Promise<MessageStream | undefined>;
  /**
   * Takes up the answer of a request sent earlier on the session (`requestId`), from just after
   * `lastEventId`: what the upstream sent since, up to the response, as `send` reads an answer. An
   * upstream that cannot resume it answers with a status other than OK, or a stream that ends without
   * the response (`ended`).
   */
  resume(
    target: TransportTarget,
    requestId: string | number,
    lastEventId: string,
    opts: TransportSendOptions,
  ): Promise<TransportAnswer>;
  /** Ends the session (nothing to do without one); an upstream that keeps no sessions is fine. */
  end(target: TransportTarget): Promise<void>;
  /** Releases everything the transport holds (connections, processes). */
  close(): Promise<void>;
}
