/**
 * What a response limit works on: the size of a tools/call result, the places whose text it may change
 * (text blocks and embedded text resources, the "slots"), and the note it leaves in `_meta`. Shared by
 * compaction (response-compaction.ts) and truncation (response-truncation.ts); pure, no I/O.
 */
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

export type Result = Record<string, unknown>;

/** UTF-8 bytes of `JSON.stringify(result)`. */
export function resultSize(result: Result): number {
  return Buffer.byteLength(JSON.stringify(result), 'utf8');
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function withNote(result: Result, note: LimitNote): Result {
  const meta = isPlainObject(result._meta) ? result._meta : {};
  return { ...result, _meta: { ...meta, [RESPONSE_LIMIT_META_KEY]: note } };
}

// ---- text slots: the places whose text may be changed ----

/** A text block's `text`, or an embedded text resource's `resource.text`. */
export interface Slot {
  index: number;
  text: string;
  kind: 'text' | 'resource';
}

export function contentOf(result: Result): unknown[] {
  return Array.isArray(result.content) ? (result.content as unknown[]) : [];
}

export function textSlots(result: Result): Slot[] {
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
export function withTexts(result: Result, replacements: Map<number, string>): Result {
  if (replacements.size === 0) return result;
  const content = contentOf(result).map((block, index) => {
    const text = replacements.get(index);
    if (text === undefined || !isPlainObject(block)) return block;
    if (block.type === 'text') return { ...block, text };
    return { ...block, resource: { ...(block.resource as Record<string, unknown>), text } };
  });
  return { ...result, content };
}

export function isJsonContainer(text: string): boolean {
  return parseContainer(text) !== NOT_JSON;
}

const NOT_JSON = Symbol('not JSON');

/** The value of text that is a JSON object or array, else NOT_JSON. */
function parseContainer(text: string): unknown {
  const t = text.trimStart();
  if (!t.startsWith('{') && !t.startsWith('[')) return NOT_JSON;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return NOT_JSON;
  }
}

/**
 * A text block whose JSON equals structuredContent (the backwards-compatibility copy) carries its
 * information. Key order does not matter; the usual copy (`JSON.stringify` of the same value) is
 * recognised without sorting keys, and values of different sizes without comparing them.
 */
export function duplicatesStructured(text: string, structured: unknown): boolean {
  const b = serialized(structured);
  // The usual copy is exactly JSON.stringify's text: no parsing needed.
  if (text === b) return true;
  const parsed = parseContainer(text);
  if (parsed === NOT_JSON) return false;
  // Canonical JSON only reorders keys: its length is JSON.stringify's.
  const a = JSON.stringify(parsed);
  if (a.length !== b.length) return false;
  return a === b || canonicalJson(parsed) === canonicalJson(structured);
}

/** JSON.stringify of a structured value, once per value: the steps of one limit ask for it repeatedly. */
const serializedValues = new WeakMap<object, string>();
function serialized(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value) ?? 'null';
  let text = serializedValues.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    serializedValues.set(value, text);
  }
  return text;
}
