/**
 * HTTP plumbing both eras share: transport errors that say whether a request may have reached the
 * upstream, and reading the JSON-RPC messages of an SSE answer (priming events with empty data and
 * comments are skipped, as clients must).
 */
import { createParser } from 'eventsource-parser';
import { ADDRESS_REFUSED } from './address-policy';
import { UpstreamAddressRefusedError, UpstreamTransportError } from './errors';

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

/**
 * Feeds each JSON-RPC message of an SSE body to `onMessage` until it answers true (stop) or the stream
 * ends. Answers whether it stopped. Events that are not a JSON object are ignored.
 */
export async function readSseMessages(
  body: AsyncIterable<Buffer>,
  onMessage: (message: JsonObject) => boolean | void,
): Promise<boolean> {
  let stopped = false;
  const parser = createParser({
    onEvent(event) {
      if (stopped || event.data === '') return;
      let msg: unknown;
      try {
        msg = JSON.parse(event.data);
      } catch {
        return; // keep-alive noise or a non-JSON event: ignore, as clients must
      }
      if (isPlainObject(msg) && onMessage(msg) === true) stopped = true;
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    if (stopped) break;
  }
  return stopped;
}
