/**
 * The `compact` policy's lossless steps, in the order they are tried: minified JSON text, dropping text
 * that duplicates structuredContent, collapsed whitespace. Each returns undefined when it changes nothing.
 */
import type { CompactionStep, Result } from './response-content';
import {
  contentOf,
  duplicatesStructured,
  isJsonContainer,
  isPlainObject,
  textSlots,
  withTexts,
} from './response-content';

type Step = (result: Result) => Result | undefined;

export const STEPS: [CompactionStep, Step][] = [
  ['minify-json', minifyJsonStep],
  ['drop-duplicate-text', dropDuplicateTextStep],
  ['collapse-whitespace', collapseWhitespaceStep],
];

/** Re-runs the named steps (in their usual order) on the original result. */
export function runSteps(result: Result, names: CompactionStep[]): Result {
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
