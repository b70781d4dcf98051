/**
 * An upstream's JSON-RPC error as the client hears it (docs/protocol-decisions.md). Most are relayed
 * unchanged. Three codes describe the *request* rather than the work, and the request an upstream sees
 * is the gateway's own (its headers, its protocol version, its capabilities on this hop):
 *
 * - `-32020` (header mismatch) and `-32022` (unsupported version): the client's headers and version were
 *   already checked by the gateway, so the fault is the gateway's (or the upstream's) and the client gets
 *   `-31011` (HTTP 502) naming the upstream, never a "your headers are wrong" it cannot fix;
 * - `-32021` (missing capability): relayed, with the upstream's `requiredCapabilities`, only when the
 *   client itself did not declare one of them (it can retry declaring it). When the client declared all
 *   of them, the gateway left them out on this hop, and the answer is `-31011` too.
 */
import type { ClientCapabilities, JsonRpcErrorObject } from '../protocol';
import { ERROR, ProtocolError, RelayedError } from '../protocol';

const ABOUT_THE_REQUEST: ReadonlySet<number> = new Set([
  ERROR.HeaderMismatch.code,
  ERROR.UnsupportedProtocolVersion.code,
]);

export function fromUpstream(
  alias: string,
  error: JsonRpcErrorObject,
  clientCapabilities: ClientCapabilities,
): ProtocolError | RelayedError {
  const relayed = new RelayedError(error.code, error.message, error.data);
  if (error.code === ERROR.MissingRequiredClientCapability.code) {
    const required = (error.data as { requiredCapabilities?: unknown } | undefined)?.requiredCapabilities;
    if (lacksAny(clientCapabilities, required)) return relayed;
    return rejected(alias, error);
  }
  return ABOUT_THE_REQUEST.has(error.code) ? rejected(alias, error) : relayed;
}

function rejected(alias: string, error: JsonRpcErrorObject): ProtocolError {
  return new ProtocolError(
    'UpstreamRejected',
    `Upstream "${alias}" refused the gateway's request (${error.code}: ${error.message}); the client's request was valid`,
    { upstream: alias, upstreamError: { code: error.code, message: error.message } },
  );
}

/**
 * Whether `declared` misses any capability in `required` (a ClientCapabilities-shaped object): a key the
 * client did not declare, at any depth. `elicitation: {}` declares form mode, as 2026-07-28 reads it.
 */
export function lacksAny(declared: unknown, required: unknown): boolean {
  return missing(isObject(declared) ? normalizeElicitation(declared) : {}, required);
}

function missing(have: unknown, need: unknown): boolean {
  if (!isObject(need)) return false;
  const got = isObject(have) ? have : {};
  return Object.entries(need).some(
    ([key, sub]) => !Object.hasOwn(got, key) || got[key] === undefined || missing(got[key], sub),
  );
}

function normalizeElicitation(caps: Record<string, unknown>): Record<string, unknown> {
  const e = caps.elicitation;
  if (!isObject(e) || Object.keys(e).length > 0) return caps;
  return { ...caps, elicitation: { form: {} } };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
