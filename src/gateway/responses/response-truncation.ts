/**
 * Truncation: text is cut on code point boundaries, keeping head and tail around a visible marker, with
 * every text slot given the same byte cap. Structured content is never cut, only dropped whole when a
 * text block duplicates it; non-text blocks and `_meta` are never touched.
 */
import type { LimitNote, Result, Slot } from './response-content';
import { duplicatesStructured, resultSize, textSlots, withNote, withTexts } from './response-content';

/** The marker put between the kept head and tail of a cut text. */
export function truncationMarker(removedChars: number): string {
  return `\n…[truncated ${removedChars} characters by TaskRouter]…\n`;
}

export interface Fitted {
  result: Result;
  note: LimitNote;
}

/**
 * Fits the result by cutting text: first keeping structured content; if structured content, non-text
 * blocks and `_meta` alone are too large, dropping structured content when a text block duplicates it.
 */
export function truncateToFit(result: Result, limit: number, base: LimitNote): Fitted | undefined {
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
    const cut = cutText(s.text, cap - s.markerCost, s.codePoints);
    changes.set(s.index, cut.text);
    removed += cut.removed;
  }
  const note = makeNote(base, removed, dropped);
  const out = withNote(withTexts(result, changes), note);
  return resultSize(out) <= limit ? { result: out, note } : undefined;
}

/**
 * Keeps at most `keepBytes` (JSON-escaped UTF-8) of head and tail, split evenly, around the marker.
 * `codePoints`: the text's, when the caller counted them already. The removed middle is never walked:
 * its count is the whole text's minus what is kept, so cutting a huge text costs what it keeps.
 */
export function cutText(
  text: string,
  keepBytes: number,
  codePoints = countCodePoints(text),
): { text: string; removed: number } {
  const head = takeHead(text, Math.ceil(keepBytes / 2));
  const tailStart = takeTail(text, keepBytes - head.cost, head.end);
  const kept = text.slice(0, head.end);
  const tail = text.slice(tailStart);
  const removed = codePoints - countCodePoints(kept) - countCodePoints(tail);
  return { text: kept + truncationMarker(removed) + tail, removed };
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

const SURROGATE = /[\uD800-\uDFFF]/;

/** Code points: a well-formed surrogate pair is one, a lone surrogate one too. */
function countCodePoints(text: string): number {
  // Most texts have no surrogate at all; the regular expression engine finds that out far faster.
  if (!SURROGATE.test(text)) return text.length;
  let pairs = 0;
  for (let i = 0; i < text.length - 1; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        pairs++;
        i++;
      }
    }
  }
  return text.length - pairs;
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
