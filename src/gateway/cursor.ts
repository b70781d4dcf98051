/**
 * One opaque cursor for an aggregated list: the next cursor of every upstream that has more pages. An
 * upstream absent from the cursor is finished. Tampering can only ask upstreams for other pages of lists
 * the caller may read anyway, so the cursor is encoded, not sealed.
 */
import { ProtocolError } from '../protocol';

const VERSION = 1;

export function encodeCursor(next: Record<string, string>): string | undefined {
  if (Object.keys(next).length === 0) return undefined;
  return Buffer.from(JSON.stringify({ v: VERSION, next }), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): Record<string, string> {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as {
      v?: unknown;
      next?: unknown;
    };
    if (parsed.v !== VERSION || typeof parsed.next !== 'object' || parsed.next === null) throw new Error();
    const next: Record<string, string> = {};
    for (const [alias, c] of Object.entries(parsed.next)) {
      if (typeof c !== 'string') throw new Error();
      next[alias] = c;
    }
    return next;
  } catch {
    throw new ProtocolError('InvalidParams', 'Invalid cursor');
  }
}
