/**
 * The response processing of a `tools/call` result (the gateway's meta, then the project's response
 * limit) as data a worker thread can apply where a large answer is parsed (src/upstream/answers.ts), so
 * the whole result never reaches the event loop: only what the client will receive does. The ordinary
 * path applies the same function itself to results that were small enough to parse on the event loop.
 */
import type { LimitsConfig } from '../../config/config';
import type { Implementation } from '../../protocol';
import { ProtocolError } from '../../protocol/errors';
import type { AnswerPreparation } from '../../upstream/answer-parse';
import { applyResponseLimits } from './response-limits';
import { asCallResult, withGatewayMeta } from './responses';

type Result = Record<string, unknown>;

export type ToolResultPreparation = {
  kind: 'tool-result';
  limits: Pick<LimitsConfig, 'maxResultBytes' | 'overflow'>;
  serverInfo: Implementation;
  /** Set by the upstream client: a 2025-era result, which has no `resultType` (read as `complete`). */
  legacy?: boolean;
};

export function toolResultPreparation(limits: LimitsConfig, serverInfo: Implementation): AnswerPreparation {
  const spec: ToolResultPreparation = {
    kind: 'tool-result',
    limits: { maxResultBytes: limits.maxResultBytes, overflow: limits.overflow },
    serverInfo,
  };
  return spec;
}

/**
 * What every non-task `tools/call` result gets before the client sees it (docs/response-processing.md):
 * a `resultType` when it has none (the one place that makes sure of it, whatever path the result took:
 * forwarded, cached, or a stored task result relayed), the gateway's meta, the project's limit.
 */
export function processToolResult(
  result: Result,
  limits: Pick<LimitsConfig, 'maxResultBytes' | 'overflow'>,
  serverInfo: Implementation,
): Result {
  return applyResponseLimits(withGatewayMeta(asCallResult(result), serverInfo), limits).result;
}

/**
 * Applied on the worker thread. A task (an upstream that answered an ordinary call with one) is left
 * as it is: the caller refuses it.
 */
export function prepareAnswer(result: Result, preparation: AnswerPreparation): Result {
  const spec = preparation as unknown as ToolResultPreparation;
  if (spec.kind !== 'tool-result' || result.resultType === 'task') return result;
  const modern = spec.legacy ? { ...result, resultType: 'complete' } : result;
  return processToolResult(modern, spec.limits, spec.serverInfo);
}

/** The gateway's refusal (ResultTooLarge) as data, to be thrown again on the event loop. */
export function refusalOf(err: unknown): { kind: string; message: string; data?: unknown } | undefined {
  if (!(err instanceof ProtocolError)) return undefined;
  return { kind: err.kind, message: err.message, ...(err.data !== undefined && { data: err.data }) };
}
