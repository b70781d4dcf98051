/** Bounding text an upstream controls (status and progress messages) before the gateway keeps or relays it. */

/** Marks where a bounded text was cut. */
export const TRUNCATION_MARK = '…';

/**
 * `text` if it has at most `maxChars` UTF-16 code units, else its start cut to `maxChars` including a
 * final `…`. A surrogate pair is never split (the cut moves one unit earlier), so the result stays valid
 * UTF-16 and encodes as UTF-8 without replacement characters.
 */
export function truncateText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let end = Math.max(0, maxChars - TRUNCATION_MARK.length);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1; // a high surrogate whose pair would be cut off
  return text.slice(0, end) + TRUNCATION_MARK;
}
