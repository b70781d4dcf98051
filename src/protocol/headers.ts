/**
 * Streamable HTTP header rules (2026-07-28): `Mcp-Method`, `Mcp-Name` and `MCP-Protocol-Version`
 * mirror body fields. Values that are not plain visible ASCII travel as `=?base64?…?=`.
 */
import { METHOD } from './constants';

const SENTINEL = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/;
const PLAIN = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/** Encodes a header value, using the base64 form when plain ASCII would be ambiguous or invalid. */
export function encodeHeaderValue(value: string): string {
  if (PLAIN.test(value) && !value.startsWith('=?base64?')) return value;
  return `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/** Decodes a header value; returns undefined for a malformed sentinel or invalid characters. */
export function decodeHeaderValue(raw: string): string | undefined {
  const m = SENTINEL.exec(raw);
  if (m) return Buffer.from(m[1] ?? '', 'base64').toString('utf8');
  if (raw.startsWith('=?base64?')) return undefined; // a sentinel that is not well formed
  if (raw === '' || PLAIN.test(raw)) return raw;
  return undefined;
}

/** Which body field `Mcp-Name` mirrors for a method, if any. */
export function nameFieldFor(method: string): 'name' | 'uri' | 'taskId' | undefined {
  switch (method) {
    case METHOD.toolsCall:
    case 'prompts/get':
      return 'name';
    case 'resources/read':
      return 'uri';
    case METHOD.tasksGet:
    case METHOD.tasksUpdate:
    case METHOD.tasksCancel:
      return 'taskId';
    default:
      return undefined;
  }
}
