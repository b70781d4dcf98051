/**
 * How 2025-era servers refuse what they cannot serve (docs/interop.md, measured in the interop notes):
 * a session they do not know (HTTP 404 `Session not found`, or server-everything's HTTP 400 `No valid
 * session ID provided` / `Server not initialized`), and a protocol version they do not speak (HTTP 400
 * `Unsupported protocol version: …`, or `-32022` from 2026-only servers).
 */
import type { UpstreamReply } from '../../endpoint';
import { UpstreamTransportError } from '../../errors';
import { STATUS } from '../../transport/types';

const SESSION_LOST =
  /no valid session id|server not initialized|session not found|mcp-session-id header is required/i;
const VERSION_REFUSED = /unsupported protocol version/i;
const UNSUPPORTED_VERSION_CODE = -32022;

/** The upstream does not know the session (or wants one): a stateful server to (re)initialize. */
export function isSessionLost(httpStatus: number, message: string): boolean {
  return (
    httpStatus === STATUS.unknown ||
    ((httpStatus === STATUS.refused || httpStatus === STATUS.ok) && SESSION_LOST.test(message))
  );
}

/** The upstream does not speak the version it was called with. */
export function isVersionRefused(code: number | undefined, message: string): boolean {
  return code === UNSUPPORTED_VERSION_CODE || VERSION_REFUSED.test(message);
}

/**
 * A 2026-07-28 request refused the way a 2025-era server refuses it: a version or session refusal for
 * any method, and any refusal of `server/discover` (which 2025 servers do not have: -32601, HTTP 400/404).
 */
export function refusesEra20260728(method: string, outcome: UpstreamReply | unknown): boolean {
  const discover = method === 'server/discover';
  if (outcome instanceof UpstreamTransportError) {
    const status = outcome.httpStatus;
    // Only a refusal of the request itself (the transport's 4xx statuses), never an upstream failure.
    if (status === undefined || status < STATUS.refused || status >= 500) return false;
    return discover || SESSION_LOST.test(outcome.message) || VERSION_REFUSED.test(outcome.message);
  }
  const reply = outcome as UpstreamReply;
  if (reply.kind !== 'error') return false;
  const { message } = reply.error;
  return discover || SESSION_LOST.test(message) || VERSION_REFUSED.test(message);
}

/** The 2026 envelope refusal (`params._meta must carry …protocolVersion…`), at HTTP 400. */
const ENVELOPE_REFUSED = /_meta|protocol ?version/i;

/** A 2025 request refused the way a 2026-only server refuses it: HTTP 400 about the missing envelope. */
export function refusesEra20251125(
  reply: UpstreamReply | { kind: string },
): reply is Extract<UpstreamReply, { kind: 'error' }> {
  if (reply.kind !== 'error') return false;
  const { httpStatus, error } = reply as Extract<UpstreamReply, { kind: 'error' }>;
  return httpStatus === STATUS.refused && ENVELOPE_REFUSED.test(error.message);
}
