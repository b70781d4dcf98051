/** The one place where anything thrown while handling a request becomes a JSON-RPC error response. */
import type { RequestId } from '../protocol';
import { ERROR, ProtocolError, RelayedError } from '../protocol';

export interface ErrorResponse {
  status: number;
  body: { jsonrpc: '2.0'; id: RequestId | null; error: { code: number; message: string; data?: unknown } };
  /** HTTP headers the reply carries (`Retry-After` for a retryable refusal that says when). */
  headers?: Record<string, string>;
}

/** HTTP status for a relayed upstream error code: the spec's MUSTs, 200 for everything else. */
const STATUS_BY_CODE = new Map<number, number>([
  [ERROR.MethodNotFound.code, 404],
  [ERROR.HeaderMismatch.code, 400],
  [ERROR.MissingRequiredClientCapability.code, 400],
  [ERROR.UnsupportedProtocolVersion.code, 400],
]);

export function toJsonRpcError(err: unknown, id: RequestId | null): ErrorResponse {
  if (err instanceof ProtocolError) {
    const retry = retryAfterSeconds(err.data);
    return {
      status: err.httpStatus,
      body: frame(id, err.code, err.message, err.data),
      ...(retry !== undefined && { headers: { 'Retry-After': String(retry) } }),
    };
  }
  if (err instanceof RelayedError) {
    return { status: STATUS_BY_CODE.get(err.code) ?? 200, body: frame(id, err.code, err.message, err.data) };
  }
  // Unknown failures reveal nothing of their cause to the client; the caller logs them.
  return { status: 500, body: frame(id, ERROR.InternalError.code, 'Internal error') };
}

function frame(id: RequestId | null, code: number, message: string, data?: unknown): ErrorResponse['body'] {
  return { jsonrpc: '2.0', id, error: { code, message, ...(data !== undefined && { data }) } };
}

/** Whole seconds (at least 1) of a refusal's `data.retryAfterMs`, for the HTTP `Retry-After` header. */
function retryAfterSeconds(data: unknown): number | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const ms = (data as { retryAfterMs?: unknown }).retryAfterMs;
  return typeof ms === 'number' && Number.isFinite(ms) && ms >= 0
    ? Math.max(1, Math.ceil(ms / 1000))
    : undefined;
}
