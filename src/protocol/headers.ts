/**
 * Streamable HTTP header rules (2026-07-28): `Mcp-Method`, `Mcp-Name` and `MCP-Protocol-Version`
 * mirror body fields. Values that are not plain visible ASCII travel as `=?base64?…?=`.
 */
import { HEADER } from './constants';
import { nameFieldFor } from './methods';

/** `=?base64?…?=` with canonical, padded base64 inside. */
const SENTINEL = /^=\?base64\?((?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?)\?=$/;
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
  // A complete wrapper around bad base64 is an error; a half-written wrapper is just a literal value.
  if (raw.startsWith('=?base64?') && raw.endsWith('?=')) return undefined;
  if (raw === '' || PLAIN.test(raw)) return raw;
  return undefined;
}

/**
 * The headers a client sends with one POSTed request: content negotiation plus the mirrored
 * `MCP-Protocol-Version`, `Mcp-Method` and (where the method has one) `Mcp-Name`.
 */
export function requestHeaders(
  method: string,
  params: Record<string, unknown>,
  protocolVersion: string,
): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    [HEADER.protocolVersion]: protocolVersion,
    [HEADER.method]: method,
  };
  const field = nameFieldFor(method);
  const name = field ? params[field] : undefined;
  if (typeof name === 'string') headers[HEADER.name] = encodeHeaderValue(name);
  return headers;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_ANNOTATION = 'x-mcp-header';

/** One `x-mcp-header` annotation: the argument path it reads and its header name. */
export interface ParamHeader {
  path: string[];
  header: string;
  type: 'string' | 'integer' | 'boolean';
}

/**
 * The `Mcp-Param-*` headers a tool's input schema declares, or undefined when an annotation is invalid
 * (such tools must be dropped from `tools/list`): non-token or duplicate names, a type other than
 * string/integer/boolean, or an annotation not reachable through `properties` alone.
 */
export function paramHeadersOf(inputSchema: unknown): ParamHeader[] | undefined {
  const found: ParamHeader[] = [];
  const walk = (schema: unknown, path: string[]): boolean => {
    if (typeof schema !== 'object' || schema === null) return true;
    const s = schema as Record<string, unknown>;
    const annotation = s[HEADER_ANNOTATION];
    if (annotation !== undefined) {
      if (path.length === 0 || typeof annotation !== 'string' || !TOKEN.test(annotation)) return false;
      if (s.type !== 'string' && s.type !== 'integer' && s.type !== 'boolean') return false;
      found.push({ path, header: annotation, type: s.type });
    }
    const props = s.properties;
    if (typeof props !== 'object' || props === null) return true;
    return Object.entries(props).every(([k, v]) => walk(v, [...path, k]));
  };
  if (!walk(inputSchema, [])) return undefined;
  // Annotations anywhere else (items, oneOf, $defs …) are not reachable through `properties` alone.
  if (countAnnotations(inputSchema) !== found.length) return undefined;
  const names = found.map((f) => f.header.toLowerCase());
  if (new Set(names).size !== names.length) return undefined;
  return found;
}

function countAnnotations(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + countAnnotations(v), 0);
  if (typeof value !== 'object' || value === null) return 0;
  return Object.entries(value).reduce(
    (n, [k, v]) => n + (k === HEADER_ANNOTATION ? 1 : 0) + countAnnotations(v),
    0,
  );
}

function argumentAt(args: unknown, path: string[]): unknown {
  let v = args;
  for (const key of path) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/** Header values for the arguments of one call: lower-cased `mcp-param-*` names → encoded values. */
export function paramHeaderValues(headers: ParamHeader[], args: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of headers) {
    const v = argumentAt(args, h.path);
    if (v === undefined || v === null) continue;
    const text = typeof v === 'string' ? encodeHeaderValue(v) : String(v);
    out[`${HEADER.paramPrefix}${h.header.toLowerCase()}`] = text;
  }
  return out;
}

/**
 * Checks the client's `Mcp-Param-*` headers against the arguments: every expected header present and
 * equal (integers compared numerically), no declared header sent without its argument. Returns a
 * description of the first mismatch, or undefined.
 */
export function paramHeaderMismatch(
  headers: ParamHeader[],
  args: unknown,
  received: (name: string) => string | undefined,
): string | undefined {
  const expected = paramHeaderValues(headers, args);
  for (const h of headers) {
    const name = `${HEADER.paramPrefix}${h.header.toLowerCase()}`;
    const got = received(name);
    const want = expected[name];
    if (want === undefined) {
      if (got !== undefined) return `${name} sent without its argument`;
      continue;
    }
    if (got === undefined) return `missing ${name} header`;
    const decoded = decodeHeaderValue(got);
    const equal =
      h.type === 'integer'
        ? decoded !== undefined && Number(decoded) === Number(want)
        : decoded === decodeHeaderValue(want);
    if (!equal) return `${name} does not match the argument`;
  }
  return undefined;
}
