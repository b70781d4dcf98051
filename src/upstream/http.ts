/**
 * HTTP plumbing both eras share: transport errors that say whether a request may have reached the
 * upstream, and reading the JSON-RPC messages of an SSE answer (priming events with empty data and
 * comments are skipped, as clients must), each event within a bound.
 */
import { ADDRESS_REFUSED } from './address-policy';
import type { AnswerContext } from './answers';
import { UnreadableAnswer } from './answers';
import { UpstreamAddressRefusedError, UpstreamAnswerTooLarge, UpstreamTransportError } from './errors';
import { SseFramer } from './sse-framer';

/** Connection errors raised before any byte of the request could have been sent. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

export function transportError(alias: string, err: unknown): UpstreamTransportError {
  if (err instanceof UpstreamTransportError) return err;
  const code = (err as { code?: string }).code ?? '';
  if (code === ADDRESS_REFUSED) return new UpstreamAddressRefusedError(alias);
  const reason = err instanceof Error ? err.message : String(err);
  return new UpstreamTransportError(
    `Upstream "${alias}" is unreachable: ${reason}`,
    !NOT_SENT_CODES.has(code),
  );
}

export type JsonObject = Record<string, unknown>;

export function isPlainObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Bounds on one SSE body (answers.ts): each event's size, and how its data is parsed. */
export interface SseBounds {
  /** Largest event (bytes of its data and of any one line); past it reading stops with `tooLarge()`. */
  maxEventBytes: number;
  tooLarge: () => Error;
  /** Parses an event's data, given as pieces (large ones on a worker thread); JSON.parse when absent. */
  parse?: (data: Buffer[], bytes: number) => Promise<unknown>;
}

/**
 * The bounds of an SSE body. A request's answer: any event may carry the response, so each may be as
 * large as an answer (`bounds.maxBytes`), and events are parsed like JSON answers (large ones on a
 * thread, with the request's preparation). A stream of notifications only: `bounds.maxEventBytes`.
 */
export function sseBounds(ctx: AnswerContext, carries: 'answer' | 'notifications'): SseBounds {
  const { bounds, alias } = ctx;
  const [max, limit] =
    carries === 'answer'
      ? [bounds.maxBytes, bounds.bytesLimit]
      : [bounds.maxEventBytes, 'upstreams.maxSseEventBytes' as const];
  return {
    maxEventBytes: max,
    tooLarge: () => new UpstreamAnswerTooLarge(alias, limit, max, 'SSE event'),
    parse: (data, bytes) => ctx.parser.parsePieces(data, bytes, ctx),
  };
}

/**
 * Feeds each JSON-RPC message of an SSE body to `onMessage` until it answers true (stop) or the stream
 * ends. Answers whether it stopped. Events that are not a JSON object are ignored. With `bounds`, an event
 * (even one whose line never ends) never grows past `maxEventBytes`: reading stops with `tooLarge()`. An
 * answer of `onMessage` that is a promise is awaited before the next message is handed over and the next
 * chunk read, so a handler that waits (the client's socket is full) stops reading the upstream, and TCP
 * back-pressure reaches it.
 */
export async function readSseMessages(
  body: AsyncIterable<Buffer>,
  onMessage: (message: JsonObject) => boolean | void | Promise<boolean | void>,
  bounds?: SseBounds,
  /** Each event id the stream sets, once its event was handled (a resumption point). */
  onEventId?: (id: string) => void,
): Promise<boolean> {
  // Events are taken from the framer and handled after each chunk, so parsing one may wait (a thread).
  const events: Array<{ data: Buffer[]; bytes: number; id: string | undefined }> = [];
  const framer = new SseFramer(bounds?.maxEventBytes ?? Infinity, (data, bytes, id) =>
    events.push({ data, bytes, id }),
  );
  for await (const chunk of body) {
    framer.push(chunk);
    if (framer.overflowed && bounds) throw bounds.tooLarge();
    for (const { data, bytes, id } of events.splice(0)) {
      if (bytes === 0) {
        if (id !== undefined) onEventId?.(id);
        continue; // a priming event
      }
      let msg: unknown;
      try {
        msg = bounds?.parse
          ? await bounds.parse(data, bytes)
          : JSON.parse(Buffer.concat(data, bytes).toString('utf8'));
      } catch (err) {
        if (err instanceof SyntaxError || err instanceof UnreadableAnswer) continue; // noise, as clients must
        throw err; // a bound passed, or the answer's preparation refused it
      }
      if (isPlainObject(msg) && (await onMessage(msg)) === true) return true;
      // Once its message is handled: resuming from this id replays what follows it, not it.
      if (id !== undefined) onEventId?.(id);
    }
  }
  return false;
}
