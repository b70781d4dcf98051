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
 */
import type { LimitsConfig } from '../config/config';
import { ProtocolError } from '../protocol/errors';
import { canonicalJson } from './result-cache';

/** The gateway-owned `_meta` key carrying the note of what the limit changed. */
export const RESPONSE_LIMIT_META_KEY = 'com.taskrouter/responseLimit';

export type CompactionStep = 'minify-json' | 'drop-duplicate-text' | 'collapse-whitespace';

export interface LimitReport {
  policy: 'truncate' | 'compact' | 'error';
  limitBytes: number;
  originalBytes: number;
  finalBytes: number;
  /** Code points removed from text by truncation (summed over blocks). */
  removedChars?: number;
  droppedStructuredContent?: boolean;
  /** Lossless steps that changed the result, in the order applied. */
  compacted?: CompactionStep[];
}

/** The note written under `_meta["com.taskrouter/responseLimit"]` (the report minus `finalBytes`). */
export type LimitNote = Omit<LimitReport, 'finalBytes'>;

type Result = Record<string, unknown>;

/** UTF-8 bytes of `JSON.stringify(result)`. */
export function resultSize(result: Result): number {
  return Buffer.byteLength(JSON.stringify(result), 'utf8');
}

/** The marker put between the kept head and tail of a cut text. */
export function truncationMarker(removedChars: number): string {
  return `\n…[truncated ${removedChars} characters by TaskRouter]…\n`;
}

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

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function withNote(result: Result, note: LimitNote): Result {
  const meta = isPlainObject(result._meta) ? result._meta : {};
  return { ...result, _meta: { ...meta, [RESPONSE_LIMIT_META_KEY]: note } };
}

// ---- text slots: the places whose text may be changed ----

/** A text block's `text`, or an embedded text resource's `resource.text`. */
interface Slot {
  index: number;
  text: string;
  kind: 'text' | 'resource';
}

function contentOf(result: Result): unknown[] {
  return Array.isArray(result.content) ? (result.content as unknown[]) : [];
}

function textSlots(result: Result): Slot[] {
  const slots: Slot[] = [];
  contentOf(result).forEach((block, index) => {
    if (!isPlainObject(block)) return;
    if (block.type === 'text' && typeof block.text === 'string') {
      slots.push({ index, text: block.text, kind: 'text' });
    } else if (
      block.type === 'resource' &&
      isPlainObject(block.resource) &&
      typeof block.resource.text === 'string'
    ) {
      slots.push({ index, text: block.resource.text, kind: 'resource' });
    }
  });
  return slots;
}

/** A copy of `result` with some slot texts replaced (new block objects for changed blocks only). */
function withTexts(result: Result, replacements: Map<number, string>): Result {
  if (replacements.size === 0) return result;
  const content = contentOf(result).map((block, index) => {
    const text = replacements.get(index);
    if (text === undefined || !isPlainObject(block)) return block;
    if (block.type === 'text') return { ...block, text };
    return { ...block, resource: { ...(block.resource as Record<string, unknown>), text } };
  });
  return { ...result, content };
}

// ---- compaction ----

type Step = (result: Result) => Result | undefined;

const STEPS: [CompactionStep, Step][] = [
  ['minify-json', minifyJsonStep],
  ['drop-duplicate-text', dropDuplicateTextStep],
  ['collapse-whitespace', collapseWhitespaceStep],
];

function runSteps(result: Result, names: CompactionStep[]): Result {
  let current = result;
  for (const [name, step] of STEPS) if (names.includes(name)) current = step(current) ?? current;
  return current;
}

/** Text (block or embedded resource) that is a JSON object or array, re-written without insignificant whitespace. */
function minifyJsonStep(result: Result): Result | undefined {
  const changes = new Map<number, string>();
  for (const slot of textSlots(result)) {
    const min = minifyJsonText(slot.text);
    if (min !== undefined && min.length < slot.text.length) changes.set(slot.index, min);
  }
  return changes.size > 0 ? withTexts(result, changes) : undefined;
}

/**
 * Removes whitespace outside strings from valid JSON text. Token by token, so nothing else changes: no
 * re-serialization that would round big numbers, reorder or merge keys, or re-escape strings.
 */
export function minifyJsonText(text: string): string | undefined {
  if (!isJsonContainer(text)) return undefined;
  const parts: string[] = [];
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
      continue;
    }
    const ws = c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
    if (ws) {
      if (start >= 0) parts.push(text.slice(start, i));
      start = -1;
    } else {
      if (start < 0) start = i;
      if (c === 0x22) inString = true;
    }
  }
  if (start >= 0) parts.push(text.slice(start));
  return parts.join('');
}

function isJsonContainer(text: string): boolean {
  const t = text.trimStart();
  if (!t.startsWith('{') && !t.startsWith('[')) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** A text block whose JSON equals structuredContent (the backwards-compatibility copy) carries its information. */
function duplicatesStructured(text: string, structured: unknown): boolean {
  if (!isJsonContainer(text)) return false;
  return canonicalJson(JSON.parse(text)) === canonicalJson(structured);
}

function dropDuplicateTextStep(result: Result): Result | undefined {
  if (result.structuredContent === undefined || !Array.isArray(result.content)) return undefined;
  const content = contentOf(result);
  const kept = content.filter(
    (b) =>
      !(
        isPlainObject(b) &&
        b.type === 'text' &&
        typeof b.text === 'string' &&
        duplicatesStructured(b.text, result.structuredContent)
      ),
  );
  return kept.length < content.length ? { ...result, content: kept } : undefined;
}

/** Whitespace collapsing for non-JSON text blocks (embedded resources are left as they are). */
function collapseWhitespaceStep(result: Result): Result | undefined {
  const changes = new Map<number, string>();
  for (const slot of textSlots(result)) {
    if (slot.kind !== 'text' || isJsonContainer(slot.text)) continue;
    const collapsed = collapseWhitespace(slot.text);
    if (collapsed !== slot.text) changes.set(slot.index, collapsed);
  }
  return changes.size > 0 ? withTexts(result, changes) : undefined;
}

/**
 * CRLF → LF; trailing spaces and tabs removed from every line; runs of spaces after a line's indentation
 * become one space (leading indentation and tabs are kept); three or more line breaks become two.
 */
export function collapseWhitespace(text: string): string {
  return text
    .replace(/\r\n/g, '\n')
    .split('\n')
    .map((line) => {
      const body = line.replace(/[ \t]+$/, '');
      const indent = /^[ \t]*/.exec(body)?.[0] ?? '';
      return indent + body.slice(indent.length).replace(/ {2,}/g, ' ');
    })
    .join('\n')
    .replace(/\n{3,}/g, '\n\n');
}

// ---- truncation ----

interface Fitted {
  result: Result;
  note: LimitNote;
}

/**
 * Fits the result by cutting text: first keeping structured content; if structured content, non-text
 * blocks and `_meta` alone are too large, dropping structured content when a text block duplicates it.
 */
function truncateToFit(result: Result, limit: number, base: LimitNote): Fitted | undefined {
  const kept = cutTexts(result, limit, base, false);
  if (kept !== undefined) return kept;
  if (result.structuredContent === undefined) return undefined;
  const carried = textSlots(result).some(
    (s) => s.kind === 'text' && duplicatesStructured(s.text, result.structuredContent),
  );
  if (!carried) return undefined;
  const { structuredContent: _dropped, ...rest } = result;
  return cutTexts(rest, limit, base, true);
}

function makeNote(base: LimitNote, removedChars: number, dropped: boolean): LimitNote {
  return {
    ...base,
    ...(removedChars > 0 && { removedChars }),
    ...(dropped && { droppedStructuredContent: true }),
  };
}

interface SlotCost extends Slot {
  cost: number;
  codePoints: number;
  /** Cost of the marker alone, sized for the most characters this slot could lose. */
  markerCost: number;
}

/**
 * Gives every text slot the same byte cap ("water filling"): slots under the cap stay whole, longer ones
 * keep head and tail up to the cap. The note is sized for the largest possible `removedChars` before the
 * cap is chosen, so the final size is never above the limit.
 */
function cutTexts(result: Result, limit: number, base: LimitNote, dropped: boolean): Fitted | undefined {
  const slots: SlotCost[] = textSlots(result).map((s) => {
    const codePoints = countCodePoints(s.text);
    return { ...s, cost: jsonCost(s.text), codePoints, markerCost: jsonCost(truncationMarker(codePoints)) };
  });
  const totalCodePoints = slots.reduce((n, s) => n + s.codePoints, 0);
  const envelope = withNote(
    withTexts(result, new Map(slots.map((s) => [s.index, '']))),
    makeNote(base, totalCodePoints, dropped),
  );
  const budget = limit - resultSize(envelope);
  const sizeAt = (cap: number) =>
    slots.reduce((n, s) => n + Math.min(s.cost, Math.max(cap, s.markerCost)), 0);
  if (budget < 0 || sizeAt(0) > budget) return undefined;

  let lo = 0;
  let hi = slots.reduce((m, s) => Math.max(m, s.cost), 0);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (sizeAt(mid) <= budget) lo = mid;
    else hi = mid - 1;
  }

  const changes = new Map<number, string>();
  let removed = 0;
  for (const s of slots) {
    const cap = Math.max(lo, s.markerCost);
    if (s.cost <= cap) continue;
    const cut = cutText(s.text, cap - s.markerCost);
    changes.set(s.index, cut.text);
    removed += cut.removed;
  }
  const note = makeNote(base, removed, dropped);
  const out = withNote(withTexts(result, changes), note);
  return resultSize(out) <= limit ? { result: out, note } : undefined;
}

/** Keeps at most `keepBytes` (JSON-escaped UTF-8) of head and tail, split evenly, around the marker. */
export function cutText(text: string, keepBytes: number): { text: string; removed: number } {
  const head = takeHead(text, Math.ceil(keepBytes / 2));
  const tailStart = takeTail(text, keepBytes - head.cost, head.end);
  const removed = countCodePoints(text.slice(head.end, tailStart));
  return { text: text.slice(0, head.end) + truncationMarker(removed) + text.slice(tailStart), removed };
}

/** Bytes a code point takes inside a JSON string written by JSON.stringify, UTF-8 encoded. */
function codePointCost(cp: number): number {
  if (cp === 0x22 || cp === 0x5c) return 2;
  if (cp < 0x20) return cp === 0x08 || cp === 0x09 || cp === 0x0a || cp === 0x0c || cp === 0x0d ? 2 : 6;
  if (cp < 0x80) return 1;
  if (cp < 0x800) return 2;
  if (cp >= 0xd800 && cp <= 0xdfff) return 6; // lone surrogate, written as \uXXXX
  if (cp < 0x10000) return 3;
  return 4;
}

/** Bytes of `text` inside a JSON string (quotes excluded). */
function jsonCost(text: string): number {
  return Buffer.byteLength(JSON.stringify(text), 'utf8') - 2;
}

function countCodePoints(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i += codePointLength(text, i)) n++;
  return n;
}

function isHigh(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}
function isLow(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/** UTF-16 length of the code point starting at `i` (2 only for a well-formed surrogate pair). */
function codePointLength(text: string, i: number): number {
  return isHigh(text.charCodeAt(i)) && isLow(text.charCodeAt(i + 1)) ? 2 : 1;
}

/** The longest prefix, on a code point boundary, costing at most `budget`. */
function takeHead(text: string, budget: number): { end: number; cost: number } {
  let end = 0;
  let cost = 0;
  while (end < text.length) {
    const len = codePointLength(text, end);
    const c = codePointCost(text.codePointAt(end) as number);
    if (cost + c > budget) break;
    cost += c;
    end += len;
  }
  return { end, cost };
}

/** Start of the longest suffix, on a code point boundary and not before `min`, costing at most `budget`. */
function takeTail(text: string, budget: number, min: number): number {
  let start = text.length;
  let cost = 0;
  while (start > min) {
    const len =
      isLow(text.charCodeAt(start - 1)) && start - 2 >= min && isHigh(text.charCodeAt(start - 2)) ? 2 : 1;
    const c = codePointCost(text.codePointAt(start - len) as number);
    if (cost + c > budget) break;
    cost += c;
    start -= len;
  }
  return start;
}
