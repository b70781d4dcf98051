/**
 * How the worker sends a tools/call it makes for a task (the first call, a hosted call): the stored request
 * as the call's params, and the connect retries every such send shares.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { JsonRpcErrorObject } from '../protocol';
import type { UpstreamReply } from '../upstream/client';
import { boundErrorOf, UpstreamAddressRefusedError, UpstreamTransportError } from '../upstream/errors';
import type { PayloadKind, PayloadStore } from '../store/tasks/payload-store';
import type { UpstreamCallPayload } from '../workflows/messages';
import { FAILURE } from './failures';

/** Delays between attempts of a send that certainly did not reach the upstream (connect refused, DNS). */
export const CONNECT_RETRY_DELAYS_MS = [200, 500, 1000, 2000, 4000];

/** The tools/call params of a stored request: the client's arguments and answers, with the given `_meta`. */
export function toolCallParams(
  tool: string,
  request: UpstreamCallPayload,
  meta: Record<string, unknown>,
): Record<string, unknown> & { _meta: Record<string, unknown> } {
  return {
    name: tool,
    ...(request.arguments !== undefined && { arguments: request.arguments }),
    ...(request.inputResponses !== undefined && { inputResponses: request.inputResponses }),
    ...(request.requestState !== undefined && { requestState: request.requestState }),
    _meta: meta,
  };
}

export interface SendRetries {
  /** The upstream's alias, for the failure's message. */
  upstream: string;
  /** Whether a send that may have reached the upstream may be sent again (an idempotent tool). */
  repeatDelivered: boolean;
  /** Said after "it was not repeated" when a send that may have been delivered is not repeated. */
  notRepeatedBecause?: string;
  sleep: (ms: number) => Promise<void>;
  /** Once aborted, a failure is thrown as it is (the caller cancelled the send). */
  signal?: AbortSignal;
}

/**
 * Sends, retrying failures that certainly preceded delivery (and, with `repeatDelivered`, those that may
 * not have). A bound passed becomes the error answer: the upstream's answer, or what it did, is no better
 * a second time, and the client hears which bound. Anything else throws a non-retryable ApplicationFailure
 * saying whether the call may have reached the upstream. A refused address is refused again: no retry.
 */
export async function sendRetryingUndelivered(
  send: () => Promise<UpstreamReply>,
  retries: SendRetries,
): Promise<UpstreamReply> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await send();
    } catch (err) {
      if (retries.signal?.aborted) throw err;
      const bound = boundErrorOf(err);
      if (bound) {
        const { kind: _kind, ...error } = bound;
        return { kind: 'error', error: error as JsonRpcErrorObject, httpStatus: 200 };
      }
      if (!(err instanceof UpstreamTransportError)) throw err;
      const retryable =
        !(err instanceof UpstreamAddressRefusedError) && (!err.mayHaveReached || retries.repeatDelivered);
      const delay = CONNECT_RETRY_DELAYS_MS[attempt];
      if (!retryable || delay === undefined) {
        throw ApplicationFailure.create({
          message: err.mayHaveReached ? notRepeated(retries, retryable, attempt + 1) : err.message,
          type: err.mayHaveReached ? FAILURE.callOutcomeUnknown : FAILURE.upstreamUnreachable,
          nonRetryable: true,
        });
      }
      await retries.sleep(delay);
    }
  }
}

/**
 * Why a send that may have been delivered ends here: not repeatable (the caller's reason, e.g. a tool
 * that is not idempotent), or repeated until the retries ran out (then the reason is not that one).
 */
function notRepeated(retries: SendRetries, repeatable: boolean, attempts: number): string {
  const call = `The call to upstream "${retries.upstream}"`;
  if (repeatable) {
    return `${call} failed ${attempts} times, the last time after it may have been delivered; it was not tried again`;
  }
  const because = retries.notRepeatedBecause ? ` ${retries.notRepeatedBecause}` : '';
  return `${call} failed after it may have been delivered; it was not repeated${because}`;
}

/**
 * A payload the call cannot be made without (the request, the client's answers). Gone, it is gone for
 * good (payload retention removed it): the activity fails without retrying, saying `missing`.
 */
export async function requiredPayload<T>(
  payloads: PayloadStore,
  at: { ref: string; taskKey: string; kind: PayloadKind },
  missing: string,
): Promise<T> {
  const value = await payloads.get<T>(at.ref, at.taskKey, at.kind);
  if (value === undefined) {
    throw ApplicationFailure.create({ message: missing, type: FAILURE.upstreamProtocol, nonRetryable: true });
  }
  return value;
}
