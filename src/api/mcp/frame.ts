/**
 * Reading one JSON-RPC message from a request body (a request or notification; a response too where the
 * caller allows it): media type and encoding, size limit (checked against the declared length first,
 * then while reading), shape (before parsing, in one byte pass: nesting depth, since deeply nested JSON
 * would overflow the stack of every recursive walk after it; members per object, object members in all
 * and containers in all, since each costs the parse and every walk after it far more than its bytes),
 * UTF-8 (strictly: a body that is not UTF-8 is not JSON), JSON, one meaning only (no object names a
 * member twice), and the frame. Each failure is the JSON-RPC error the spec's codes imply (-32700 for bad
 * JSON, -32600 for a bad or ambiguous frame or one too large to read, -32602 for too deep), never an
 * exception of its own, and decided before any work is done for the request.
 */
import type { IncomingMessage } from 'node:http';
import type { JsonRpcMessage } from '../../protocol';
import { JsonRpcClientMessageSchema, JsonRpcResponseSchema, ProtocolError } from '../../protocol';

/** Bounds on the shape of a JSON text, checked before it is parsed (`http.maxJson*`, docs/gateway.md). */
export interface JsonShapeLimits {
  /** Deepest nesting of arrays and objects. */
  maxDepth: number;
  /** Most members in one object. */
  maxMembers: number;
  /** Most object members in the whole text. */
  maxKeys: number;
  /** Most objects and arrays in the whole text. */
  maxContainers: number;
}

export interface FrameLimits extends JsonShapeLimits {
  /** Largest body, in bytes. */
  maxBytes: number;
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
  refuseCostlyShape(body, limits);
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
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]

/** The first shape limit a JSON text breaks, with what the client is told. */
export type ShapeViolation =
  | { limit: 'depth'; max: number }
  | { limit: 'members'; max: number }
  | { limit: 'keys'; max: number }
  | { limit: 'containers'; max: number };

/** The setting behind each limit, named in the refusal so a client (or its operator) knows which. */
const SETTING = {
  depth: 'http.maxJsonDepth',
  members: 'http.maxJsonMembers',
  keys: 'http.maxJsonKeys',
  containers: 'http.maxJsonContainers',
} as const;

function refuseCostlyShape(body: Uint8Array, limits: JsonShapeLimits): void {
  const violation = jsonShapeViolation(body, limits);
  if (!violation) return;
  const data = { limit: SETTING[violation.limit], max: violation.max };
  switch (violation.limit) {
    case 'depth':
      throw new ProtocolError('TooDeep', `JSON nests deeper than ${violation.max} levels`, data);
    case 'members':
      throw new ProtocolError(
        'InvalidRequest',
        `An object in the request has more than ${violation.max} members (${data.limit})`,
        data,
      );
    case 'keys':
      throw new ProtocolError(
        'InvalidRequest',
        `The request has more than ${violation.max} object members in all (${data.limit})`,
        data,
      );
    case 'containers':
      throw new ProtocolError(
        'InvalidRequest',
        `The request has more than ${violation.max} objects and arrays in all (${data.limit})`,
        data,
      );
  }
}

/**
 * The first shape limit a JSON text breaks, in one pass over its bytes (strings skipped with the native
 * `indexOf`, so a body of long strings costs next to nothing), stopping at the first one broken; undefined
 * when it breaks none. Members are counted by their colons, which outside strings appear only between a
 * name and its value. Malformed JSON is measured as far as it goes: the parser refuses it afterwards.
 */
export function jsonShapeViolation(json: Uint8Array, limits: JsonShapeLimits): ShapeViolation | undefined {
  // Per open container: whether it is an object, and its members so far. The depth check keeps both
  // within maxDepth + 1 entries.
  const isObject = new Uint8Array(limits.maxDepth + 2);
  const members = new Uint32Array(limits.maxDepth + 2);
  let depth = 0;
  let keys = 0;
  let containers = 0;
  for (let i = 0; i < json.length; i++) {
    const c = json[i] as number;
    if (c === QUOTE) {
      i = closingQuote(json, i);
      if (i < 0) return undefined; // unterminated: a parse error
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > limits.maxDepth) return { limit: 'depth', max: limits.maxDepth };
      if (++containers > limits.maxContainers) return { limit: 'containers', max: limits.maxContainers };
      isObject[depth] = c === OPEN_OBJECT ? 1 : 0;
      members[depth] = 0;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (depth > 0) depth--;
    } else if (c === COLON && isObject[depth] === 1) {
      if (++keys > limits.maxKeys) return { limit: 'keys', max: limits.maxKeys };
      if (++(members[depth] as number) > limits.maxMembers)
        return { limit: 'members', max: limits.maxMembers };
    }
  }
  return undefined;
}

/** The index of the quote that closes the string opened at `open`, or -1 when none does. */
function closingQuote(json: Uint8Array, open: number): number {
  let at = json.indexOf(QUOTE, open + 1);
  while (at > 0 && isEscaped(json, at)) at = json.indexOf(QUOTE, at + 1);
  return at;
}

/** Whether the byte at `at` follows an odd run of backslashes. */
function isEscaped(json: Uint8Array, at: number): boolean {
  let n = 0;
  while (json[at - 1 - n] === BACKSLASH) n++;
  return n % 2 === 1;
}

/**
 * The first member name that appears twice in one object of a JSON text (valid JSON, already parsed),
 * compared after unescaping; undefined when every object's names are unique. One pass, names only;
 * strings are skipped with the native `indexOf`.
 */
export function repeatedMember(text: string): string | undefined {
  // One entry per open container: the names seen so far for an object, null for an array.
  const open: Array<Set<string> | null> = [];
  let expectName = false;
  // The next backslash at or after the current string (-1: none left), found lazily and moving forward
  // only, so telling escaped names from plain ones costs one pass in all.
  let nextBackslash = -2;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      let end = text.indexOf('"', i + 1);
      while (end > 0 && backslashesBefore(text, end) % 2 === 1) end = text.indexOf('"', end + 1);
      if (end < 0) return undefined; // not JSON: never the case after JSON.parse
      const names = open[open.length - 1];
      if (expectName && names) {
        if (nextBackslash !== -1 && nextBackslash < i) nextBackslash = text.indexOf('\\', i);
        const escaped = nextBackslash !== -1 && nextBackslash < end;
        const name = escaped ? (JSON.parse(text.slice(i, end + 1)) as string) : text.slice(i + 1, end);
        if (names.has(name)) return name;
        names.add(name);
        expectName = false;
      }
      i = end;
    } else if (c === OPEN_OBJECT) {
      open.push(new Set());
      expectName = true;
    } else if (c === OPEN_ARRAY) {
      open.push(null);
      expectName = false;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      open.pop();
      expectName = false;
    } else if (c === 0x2c) {
      expectName = open[open.length - 1] instanceof Set;
    }
  }
  return undefined;
}

function backslashesBefore(text: string, at: number): number {
  let n = 0;
  while (text.charCodeAt(at - 1 - n) === BACKSLASH) n++;
  return n;
}
