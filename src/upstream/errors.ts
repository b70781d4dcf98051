/** Local (never serialized) errors of the upstream client. */
import type { JsonRpcErrorObject } from '../protocol';
import { ERROR } from '../protocol';

/**
 * The upstream could not be reached or answered with something that is not JSON-RPC.
 * `mayHaveReached` says whether the request could have been processed: a side-effecting call that may
 * have reached the upstream must not be re-sent.
 */
export class UpstreamTransportError extends Error {
  override readonly name: string = 'UpstreamTransportError';
  constructor(
    message: string,
    readonly mayHaveReached: boolean,
    readonly httpStatus?: number,
  ) {
    super(message);
  }
}

/** Which bound an answer passed, named as an operator finds it in the configuration. */
export type AnswerLimitName =
  | 'upstreams.maxResponseBytes'
  | 'limits.maxUpstreamResponseBytes'
  | 'upstreams.maxSseEventBytes'
  | 'upstreams.maxAnswerKeys';

/**
 * An upstream's answer passed a bound while it was read (bytes of a body or an SSE event, distinct keys
 * of what was parsed): reading stopped there. The request may have been processed, so it is not re-sent.
 */
export class UpstreamAnswerTooLarge extends UpstreamTransportError {
  override readonly name: string = 'UpstreamAnswerTooLarge';
  constructor(
    readonly alias: string,
    readonly limit: AnswerLimitName,
    /** The bound: bytes, or keys for `upstreams.maxAnswerKeys`. */
    readonly bound: number,
    what = 'answer',
  ) {
    super(
      limit === 'upstreams.maxAnswerKeys'
        ? `Upstream "${alias}" sent an ${what} with more than ${bound} distinct keys (${limit})`
        : `Upstream "${alias}" sent an ${what} larger than ${bound} bytes (${limit})`,
      true,
    );
  }
}

/** Which deadline cut a call, named as an operator finds it in the configuration. */
export type DeadlineName =
  'upstreams.callDeadlineMs' | 'limits.upstreamCallDeadlineMs' | 'hosting.callDeadlineMs';

/** An ordinary call's answer did not complete within its total deadline; the call was cut. */
export class UpstreamDeadlineExceeded extends UpstreamTransportError {
  override readonly name: string = 'UpstreamDeadlineExceeded';
  constructor(
    readonly alias: string,
    readonly limit: DeadlineName,
    readonly deadlineMs: number,
  ) {
    super(`Upstream "${alias}" did not complete its answer within ${deadlineMs} ms (${limit})`, true);
  }
}

/**
 * The gateway's own processing of an answer, run where the answer was parsed (a worker thread), refused
 * it: e.g. a result over the project's response limit under policy `error`. `refusal` is the gateway's
 * error as data (`kind`, `message`, `data`); the upstream client passes it on without reading it.
 */
export class AnswerPreparationRefused extends Error {
  override readonly name = 'AnswerPreparationRefused';
  constructor(readonly refusal: { kind: string; message: string; data?: unknown }) {
    super(refusal.message);
  }
}

/**
 * The JSON-RPC error a client hears for an answer past a bound (-31014) or a deadline (-31015): the
 * message and `data` name the bound and the upstream's alias, never its URL or credential.
 */
export function boundError(err: UpstreamAnswerTooLarge | UpstreamDeadlineExceeded): JsonRpcErrorObject & {
  kind: 'UpstreamResponseTooLarge' | 'UpstreamDeadlineExceeded';
} {
  if (err instanceof UpstreamDeadlineExceeded) {
    return {
      kind: 'UpstreamDeadlineExceeded',
      code: ERROR.UpstreamDeadlineExceeded.code,
      message: err.message,
      data: { upstream: err.alias, limit: err.limit, deadlineMs: err.deadlineMs },
    };
  }
  const bound =
    err.limit === 'upstreams.maxAnswerKeys' ? { limitKeys: err.bound } : { limitBytes: err.bound };
  return {
    kind: 'UpstreamResponseTooLarge',
    code: ERROR.UpstreamResponseTooLarge.code,
    message: err.message,
    data: { upstream: err.alias, limit: err.limit, ...bound },
  };
}

/** `boundError` of a failure that is an answer past a bound or a deadline; undefined for any other. */
export function boundErrorOf(err: unknown): ReturnType<typeof boundError> | undefined {
  return err instanceof UpstreamAnswerTooLarge || err instanceof UpstreamDeadlineExceeded
    ? boundError(err)
    : undefined;
}

/**
 * The address policy refused the upstream's address (address-policy.ts): no connection was opened and
 * nothing was sent. Not worth retrying: the same address is refused again.
 */
export class UpstreamAddressRefusedError extends UpstreamTransportError {
  constructor(alias: string) {
    super(
      `Upstream "${alias}" is in a network the gateway may not call for it (upstreams.networks.allow)`,
      false,
    );
  }
}
