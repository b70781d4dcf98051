/**
 * Reading one JSON-RPC message from a request body (a request or notification; a response too where the
 * caller allows it): media type and encoding, size limit (checked against the declared length first,
 * then while reading), nesting depth (before parsing: deeply nested JSON would overflow the stack of
 * every recursive walk after it), JSON, and the frame. Each failure is the JSON-RPC error the spec's
 * codes imply (-32700 for bad JSON, -32600 for a bad frame, -32602 for too deep), never an exception of
 * its own, and decided before any work is done for the request.
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
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    throw new ProtocolError('ParseError', 'Parse error');
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
