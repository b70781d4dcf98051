/**
 * The one path from a domain error to a REST answer, shared by the admin API and the dashboard API
 * (the MCP endpoint has its JSON-RPC twin in ./errors.ts). Every answer has the same shape,
 * `{ error: { code, message } }`, and its status comes from one table:
 *
 * - `HttpError`: thrown by the HTTP plumbing itself (routes, bodies, sessions) with a code and, where
 *   the code alone does not say it (405, 413, 415, 503), an explicit status;
 * - `ControlPlaneError`: the store's refusals (invalid input, unknown rows, rights, conflicts);
 * - `InvalidInput`: an admin operation's input that does not fit its schema (src/api/admin/operations);
 * - `ProtocolError` / `RelayedError`: what the gateway's task checks answer when the dashboard acts on
 *   a task through them (answer, cancel);
 * - anything else: 500 `internal`, logged by name only (messages can echo payloads), never shown.
 */
import type { Middleware } from 'koa';
import { z } from 'zod';
import type { ErrorKind } from '../protocol';
import { ProtocolError, RelayedError } from '../protocol';
import { ControlPlaneError } from '../store/control-plane';

const STATUS = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  upstream_refused: 409,
  // Why a task's payload is hidden on the dashboard (src/gateway/tasks/task-access.ts): forbidden, or gone.
  api_key: 403,
  anonymous: 403,
  not_caller: 403,
  authorization_invalid: 403,
  expired: 410,
  internal: 500,
  upstream_unavailable: 502,
  upstream_error: 502,
  unavailable: 503,
} as const;

export type RestErrorCode = keyof typeof STATUS;

/**
 * The gateway's task-check errors as REST codes. `InvalidParams` is what a task follow-up answers for
 * an unknown or foreign task, so it reads as "not found" here.
 */
const FROM_PROTOCOL: Partial<Record<ErrorKind, RestErrorCode>> = {
  InvalidParams: 'not_found',
  UpstreamAuthorizationMissing: 'forbidden',
  UpstreamRefused: 'upstream_refused',
  TaskEngineUnavailable: 'unavailable',
  UpstreamUnavailable: 'upstream_unavailable',
  UpstreamAddressRefused: 'upstream_unavailable',
  UpstreamRejected: 'upstream_error',
};

/** An HTTP-level refusal; `status` overrides the code's own status where the code alone does not say it. */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  constructor(
    readonly code: RestErrorCode,
    message: string,
    readonly status: number = STATUS[code],
  ) {
    super(message);
  }
}

interface RestAnswer {
  status: number;
  code: RestErrorCode;
  message: string;
}

/**
 * What a rejected input is told. The operations word their own checks for people, naming the field
 * first (`"limit" must be a number`): those are said as they are. Anything else is zod's own account,
 * worded as the store's `parse` words it, so a type error reads the same whichever layer caught it.
 */
export function inputMessage(err: z.ZodError): string {
  const worded = err.issues.every((i) => i.message.startsWith('"'));
  return worded ? err.issues.map((i) => i.message).join('; ') : z.prettifyError(err);
}

/** An operation's input rejected by its schema: 400 `invalid` (the CLI: a usage error or exit 1). */
export class InvalidInput extends Error {
  override readonly name = 'InvalidInput';
  constructor(readonly error: z.ZodError) {
    super(inputMessage(error));
  }
}

/** The answer for anything thrown while serving a REST request; undefined for an unexpected failure. */
export function restAnswer(err: unknown): RestAnswer | undefined {
  if (err instanceof HttpError) return { status: err.status, code: err.code, message: err.message };
  if (err instanceof ControlPlaneError)
    return { status: STATUS[err.code], code: err.code, message: err.message };
  if (err instanceof InvalidInput) return { status: STATUS.invalid, code: 'invalid', message: err.message };
  if (err instanceof ProtocolError) {
    const code = FROM_PROTOCOL[err.kind] ?? 'internal';
    return { status: STATUS[code], code, message: err.message };
  }
  if (err instanceof RelayedError) {
    return {
      status: STATUS.upstream_error,
      code: 'upstream_error',
      message: `The upstream answered: ${err.message}`,
    };
  }
  return undefined;
}

export interface RestErrorOptions {
  /** `WWW-Authenticate: Bearer realm="…"` on 401 answers. */
  realm: string;
  /** Names the API in the log line of an unexpected failure. */
  label: string;
  logger?: { error(obj: object, msg: string): void };
}

/** Top middleware of a REST API: whatever the rest of the chain throws becomes its answer. */
export function restErrors(opts: RestErrorOptions): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const answer = restAnswer(err);
      if (!answer)
        opts.logger?.error({ err: (err as Error | undefined)?.name }, `${opts.label} request failed`);
      const { status, code, message } = answer ?? {
        status: 500,
        code: 'internal',
        message: 'Internal error',
      };
      ctx.status = status;
      if (status === 401) ctx.set('WWW-Authenticate', `Bearer realm="${opts.realm}"`);
      ctx.body = { error: { code, message } };
    }
  };
}
