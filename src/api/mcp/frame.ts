/**
 * Reading one JSON-RPC message from a request body (a request or notification; a response too where the
 * caller allows it): media type and encoding, size limit (checked against the declared length first,
 * then while reading), nesting depth (before parsing: deeply nested JSON would overflow the stack of
 * every recursive walk after it), UTF-8 (strictly: a body that is not UTF-8 is not JSON), JSON, one
 * meaning only (no object names a member twice), and the frame. Each failure is the JSON-RPC error the
 * spec's codes imply (-32700 for bad JSON, -32600 for a bad or ambiguous frame, -32602 for too deep),
 * never an exception of its own, and decided before any work is done for the request.
 */
import type { IncomingMessage } from 'node:http';
import type { JsonRpcMessage } from '../../protocol';
import { JsonRpcClientMessageSchema, JsonRpcResponseSchema, ProtocolError } from '../../protocol';

export interface FrameLimits {
  /** Largest body, in bytes. */
  maxBytes: number;
  /** Deepest nesting of arrays and objects. */
  maxDepth: number;
}

export async function readMessage(
  req: IncomingMessage,
  contentType: string,
  limits: FrameLimits,
  opts: { responses?: boolean } = {},
): Promise<JsonRpcMessage> {
  const limit = limits.maxBytes;
  if (contentType.split(';')[0]?.trim().toLowerCase() !== 'application/json') {
    throw new ProtocolError('UnsupportedMediaType', 'Content-Type must be application/json');
  }
  // Bodies are read as they are: a compressed body would be JSON the gateway never checked.
  const encoding = String(req.headers['content-encoding'] ?? 'identity')
    .trim()
    .toLowerCase();
  if (encoding !== 'identity') {
    throw new ProtocolError('UnsupportedMediaType', `Content-Encoding "${encoding}" is not accepted`);
  }
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) throw new ProtocolError('PayloadTooLarge', `Request body exceeds ${limit} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new ProtocolError('PayloadTooLarge', `Request body exceeds ${limit} bytes`);
    chunks.push(chunk);
  }
  const body = Buffer.concat(chunks, size);
  if (nestingDepth(body) > limits.maxDepth) {
    throw new ProtocolError('TooDeep', `JSON nests deeper than ${limits.maxDepth} levels`);
  }
  let text: string;
  let json: unknown;
  try {
    // Fatal: invalid bytes are an error, not U+FFFD (a name the client never sent). A BOM is kept, so it
    // stays the parse error it always was.
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body);
    json = JSON.parse(text);
  } catch {
    throw new ProtocolError('ParseError', 'Parse error');
  }
  const repeated = repeatedMember(text);
  if (repeated !== undefined) {
    // Parsers disagree on which duplicate wins: a message that means one thing here and another to a
    // body-reading proxy in front of the gateway is refused, like a header that disagrees with the body.
    throw new ProtocolError(
      'InvalidRequest',
      `The member "${repeated.slice(0, 64)}" appears twice in one object`,
    );
  }
  const parsed = JsonRpcClientMessageSchema.safeParse(json);
  if (!parsed.success && opts.responses) {
    const response = JsonRpcResponseSchema.safeParse(json);
    if (response.success) return response.data;
  }
  if (!parsed.success) {
    if (Array.isArray(json)) throw new ProtocolError('InvalidRequest', 'Batches are not supported');
    throw new ProtocolError('InvalidRequest', 'Invalid JSON-RPC message');
  }
  return parsed.data;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN = new Set([0x5b, 0x7b]); // [ {
const CLOSE = new Set([0x5d, 0x7d]); // ] }

/** The deepest nesting of arrays and objects in a JSON text (strings skipped), in one pass. */
export function nestingDepth(json: Uint8Array): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json[i] as number;
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (OPEN.has(c)) max = Math.max(max, ++depth);
    else if (CLOSE.has(c)) depth--;
  }
  return max;
}

/**
 * The first member name that appears twice in one object of a JSON text (valid JSON, already parsed),
 * compared after unescaping; undefined when every object's names are unique. One pass, names only.
 */
export function repeatedMember(text: string): string | undefined {
  // One entry per open container: the names seen so far for an object, null for an array.
  const open: Array<Set<string> | null> = [];
  let expectName = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      let end = i + 1;
      let escaped = false;
      while (text.charCodeAt(end) !== QUOTE) {
        if (text.charCodeAt(end) === BACKSLASH) {
          escaped = true;
          end++;
        }
        end++;
      }
      const names = open[open.length - 1];
      if (expectName && names) {
        const name = escaped ? (JSON.parse(text.slice(i, end + 1)) as string) : text.slice(i + 1, end);
        if (names.has(name)) return name;
        names.add(name);
        expectName = false;
      }
      i = end;
    } else if (c === 0x7b) {
      open.push(new Set());
      expectName = true;
    } else if (c === 0x5b) {
      open.push(null);
      expectName = false;
    } else if (CLOSE.has(c)) {
      open.pop();
      expectName = false;
    } else if (c === 0x2c) {
      expectName = open[open.length - 1] instanceof Set;
    }
  }
  return undefined;
}
