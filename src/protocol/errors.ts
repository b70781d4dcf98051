/**
 * The one table of JSON-RPC error codes the gateway emits, and the one class that carries them.
 * `toJsonRpcError` in src/api is the only place these become wire responses.
 */

export const ERROR = {
  ParseError: { code: -32700, httpStatus: 400 },
  InvalidRequest: { code: -32600, httpStatus: 400 },
  MethodNotFound: { code: -32601, httpStatus: 404 },
  /** Missing `_meta` fields are 400 (spec MUST); other invalid params use 200, like the reference SDK. */
  InvalidParams: { code: -32602, httpStatus: 200 },
  MissingRequestMeta: { code: -32602, httpStatus: 400 },
  /** A request nested deeper than the gateway reads (a body limit, decided before any work). */
  TooDeep: { code: -32602, httpStatus: 400 },
  InternalError: { code: -32603, httpStatus: 200 },
  HeaderMismatch: { code: -32020, httpStatus: 400 },
  MissingRequiredClientCapability: { code: -32021, httpStatus: 400 },
  UnsupportedProtocolVersion: { code: -32022, httpStatus: 400 },
  /** Application error, outside the reserved JSON-RPC range: an upstream server could not be reached. */
  UpstreamUnavailable: { code: -31001, httpStatus: 502 },
  /** Application error: the gateway's task engine (Temporal) did not answer in time. */
  TaskEngineUnavailable: { code: -31002, httpStatus: 503 },
  /** Application error: a result exceeds the project's response limit and its policy is `error`. */
  ResultTooLarge: { code: -31005, httpStatus: 200 },
  /** Application error: the request's Origin or Host is not allowed (DNS-rebinding protection). */
  Forbidden: { code: -31006, httpStatus: 403 },
  /** Application error: the upstream no longer offers an operation the request needs (e.g. task cancel). */
  UpstreamRefused: { code: -31008, httpStatus: 200 },
  /** Application error: no valid bearer token (HTTP 401 with `WWW-Authenticate: Bearer`). */
  Unauthorized: { code: -31007, httpStatus: 401 },
  /** Application error: the caller has no credential for an upstream the call needs. */
  UpstreamAuthorizationMissing: { code: -31009, httpStatus: 200 },
  /**
   * Application error: an upstream refused the request the gateway made for a valid client request
   * (headers, protocol version or capabilities the gateway chose on that hop); `data.upstream` names it.
   */
  UpstreamRejected: { code: -31011, httpStatus: 502 },
  /** Application error: the project in the URL does not exist. */
  ProjectNotFound: { code: -31004, httpStatus: 404 },
  /**
   * Application error: a client that cannot take a task waited on one longer than the project allows;
   * the task keeps running (its id is in `data.taskId`).
   */
  TaskStillRunning: { code: -31010, httpStatus: 200 },
  /**
   * Application error: the OAuth issuer's keys could not be fetched, so a token cannot be checked (503).
   * It shared -31011 with UpstreamRejected until the isolation work gave every kind a code of its own.
   */
  IssuerUnavailable: { code: -31012, httpStatus: 503 },
  /**
   * Application error: the caller or its project is over a fair-share limit (concurrent calls, creations
   * per second, open streams). Retryable: `data.retryAfterMs` and the HTTP `Retry-After` header say when.
   */
  RateLimited: { code: -31013, httpStatus: 429 },
  /** Application error: an upstream's answer exceeded the byte limit while it was read (`data.limitBytes`). */
  UpstreamResponseTooLarge: { code: -31014, httpStatus: 502 },
  /** Application error: an ordinary call's upstream answer did not complete within the total deadline. */
  UpstreamDeadlineExceeded: { code: -31015, httpStatus: 504 },
  /**
   * Application error: a relayed stream was ended because its client did not read it (the per-stream
   * buffer bound was reached); sent as the stream's last message when the socket still takes one.
   */
  StreamOverflow: { code: -31016, httpStatus: 200 },
  /** Application error: an upstream's address is outside the networks this gateway may call (SSRF policy). */
  UpstreamAddressRefused: { code: -31017, httpStatus: 502 },
  /** Application error: a call that needed approval was denied (the task's error names who and why). */
  ApprovalDenied: { code: -31018, httpStatus: 200 },
  /** Application error: a call that needed approval was not approved in time, or its caller lost access. */
  ApprovalNotGiven: { code: -31019, httpStatus: 200 },
  /** 2025-era clients only: the `Mcp-Session-Id` is unknown, ended, expired or not the caller's (HTTP 404). */
  SessionNotFound: { code: -32001, httpStatus: 404 },
  /** Request framing errors with their specific HTTP statuses. */
  PayloadTooLarge: { code: -32600, httpStatus: 413 },
  UnsupportedMediaType: { code: -32600, httpStatus: 415 },
} as const;

export type ErrorKind = keyof typeof ERROR;

/** Every code of the table: what the gateway itself emits (an upstream's relayed error may carry any). */
export const GATEWAY_ERROR_CODES: ReadonlySet<number> = new Set(Object.values(ERROR).map((e) => e.code));

export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }

  get code(): number {
    return ERROR[this.kind].code;
  }

  get httpStatus(): number {
    return ERROR[this.kind].httpStatus;
  }
}

/**
 * A JSON-RPC error relayed unchanged from an upstream server (code, message and data kept); its HTTP
 * status follows from the code, in src/api/errors.ts.
 */
export class RelayedError extends Error {
  override readonly name = 'RelayedError';
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}
