/**
 * Project response limits for `tools/call` results (pure, no I/O). A `complete` result whose JSON is
 * larger than `maxResultBytes` is handled by the project's overflow policy:
 *
 * - `error`: ResultTooLarge.
 * - `truncate`: text is cut on code point boundaries, keeping head and tail around a visible marker.
 *   Structured content is never cut: it is dropped whole when a text block duplicates it, otherwise the
 *   call fails. Non-text blocks (image, audio, blob resources) are never cut or dropped.
 * - `compact`: lossless steps first (minified JSON text, dropping text that duplicates structuredContent,
 *   collapsed whitespace), then truncation if still too large.
 *
 * Anything that is not a `complete` tools/call result (task envelopes, tasks/get results, input_required
 * results) passes unchanged. See docs/response-processing.md.
 *
 * This module decides what a policy does with an oversized result; the changes themselves are made by
 * response-compaction.ts and response-truncation.ts, over the text slots of response-content.ts.
 */
import type { LimitsConfig } from '../../config/config';
import { ProtocolError } from '../../protocol/errors';
import { runSteps, STEPS } from './response-compaction';
import type { CompactionStep, LimitNote, LimitReport, Result } from './response-content';
import { resultSize, withNote } from './response-content';
import { truncateToFit } from './response-truncation';

export type { CompactionStep, LimitNote, LimitReport } from './response-content';
export { RESPONSE_LIMIT_META_KEY, resultSize } from './response-content';
export { collapseWhitespace, minifyJsonText } from './response-compaction';
export { cutText, truncationMarker } from './response-truncation';

/**
 * Applies the project's limit. Returns a new result object (the input is never mutated; unchanged nested
 * values are shared). `report` is present only when something was changed. Throws ProtocolError
 * `ResultTooLarge` (data `{ limitBytes, resultBytes }`) under policy `error`, or when no allowed change
 * makes the result fit.
 */
export function applyResponseLimits(
  result: Result,
  limits: LimitsConfig,
): { result: Result; report?: LimitReport } {
  if (!isToolCallResult(result)) return { result: { ...result } };
  const limitBytes = limits.maxResultBytes;
  const originalBytes = resultSize(result);
  if (originalBytes <= limitBytes) return { result: { ...result } };

  const policy = limits.overflow;
  const tooLarge = (why: string) =>
    new ProtocolError(
      'ResultTooLarge',
      `Result of ${originalBytes} bytes exceeds the project's response limit of ${limitBytes} bytes${why}`,
      { limitBytes, resultBytes: originalBytes },
    );
  if (policy === 'error') throw tooLarge('');

  const base = { policy, limitBytes, originalBytes };
  const done = (out: Result, note: LimitNote) => ({
    result: out,
    report: { ...note, finalBytes: resultSize(out) },
  });

  if (policy === 'compact') {
    const applied: CompactionStep[] = [];
    let current = result;
    for (const [name, step] of STEPS) {
      const next = step(current);
      if (next === undefined) continue;
      current = next;
      applied.push(name);
      const note: LimitNote = { ...base, compacted: [...applied] };
      const out = withNote(current, note);
      if (resultSize(out) <= limitBytes) return done(out, note);
    }
    // Still too large: truncate. If structured content has to go, the text that duplicated it must stay,
    // so the second candidate is the compaction without `drop-duplicate-text`.
    const candidates: [Result, CompactionStep[]][] = [[current, applied]];
    if (applied.includes('drop-duplicate-text')) {
      const steps = applied.filter((s) => s !== 'drop-duplicate-text');
      candidates.push([runSteps(result, steps), steps]);
    }
    for (const [candidate, steps] of candidates) {
      const fitted = truncateToFit(candidate, limitBytes, {
        ...base,
        ...(steps.length > 0 && { compacted: steps }),
      });
      if (fitted !== undefined) return done(fitted.result, fitted.note);
    }
    throw tooLarge(CANNOT_FIT);
  }

  const fitted = truncateToFit(result, limitBytes, base);
  if (fitted === undefined) throw tooLarge(CANNOT_FIT);
  return done(fitted.result, fitted.note);
}

const CANNOT_FIT =
  ' even with its text truncated (non-text content, structured content without a text copy, and _meta are never cut)';

/**
 * Only `complete` tools/call results are limited. A tasks/get result is also `complete` but carries
 * `taskId` and `status` at the top level; it is recognised and left alone.
 */
function isToolCallResult(result: Result): boolean {
  if (result.resultType !== 'complete') return false;
  return !(typeof result.taskId === 'string' && typeof result.status === 'string');
}
