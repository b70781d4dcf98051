/**
 * Per-request checks of MCP 2026-07-28 that come before any method logic: the `_meta` envelope, the
 * protocol version and the Streamable HTTP headers that mirror body fields.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { RequestMeta } from '../../src/protocol';
import {
  HEADER,
  META,
  ProtocolError,
  RequestParamsSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  decodeHeaderValue,
  nameFieldFor,
  paramHeaderValues,
  paramHeadersOf,
} from '../../src/protocol';

/**
 * Validates `params._meta`, the version and the headers, in the order the conformance suite probes them:
 * a request without `_meta` gets -32602 even though its headers are fine, so the envelope comes first;
 * a supported `MCP-Protocol-Version` header with an unsupported `_meta` version is a -32020 mismatch, so
 * header/body agreement on the version comes before the -32022 support check; `Mcp-Method` and
 * `Mcp-Name` last.
 */
export function checkEnvelope(
  method: string,
  params: Record<string, unknown>,
  headers: IncomingHttpHeaders,
): RequestMeta {
  const parsed = RequestParamsSchema.safeParse(params);
  if (!parsed.success) {
    throw new ProtocolError(
      'MissingRequestMeta',
      `Invalid params: _meta must carry ${META.protocolVersion} and ${META.clientCapabilities}`,
    );
  }
  const meta = parsed.data._meta;
  const version = meta[META.protocolVersion];
  expectHeader(headers, HEADER.protocolVersion, 'MCP-Protocol-Version', version);
  if (!SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    throw new ProtocolError('UnsupportedProtocolVersion', 'Unsupported protocol version', {
      supported: [...SUPPORTED_PROTOCOL_VERSIONS],
      requested: version,
    });
  }
  checkNameHeaders(method, params, headers);
  return meta;
}

function checkNameHeaders(
  method: string,
  params: Record<string, unknown>,
  headers: IncomingHttpHeaders,
): void {
  expectHeader(headers, HEADER.method, 'Mcp-Method', method);
  const field = nameFieldFor(method);
  const bodyValue = field === undefined ? undefined : params[field];
  // A missing or non-string body field is a params error, reported later by the method's own schema.
  if (typeof bodyValue === 'string') expectHeader(headers, HEADER.name, 'Mcp-Name', bodyValue);
}

function expectHeader(headers: IncomingHttpHeaders, key: string, display: string, expected: string): void {
  const raw = headers[key];
  if (raw === undefined) throw new ProtocolError('HeaderMismatch', `Missing required ${display} header`);
  // Node joins most repeated headers with ", " but keeps unknown ones as arrays: either way ambiguous.
  const value = typeof raw === 'string' ? decodeHeaderValue(raw) : undefined;
  if (value === undefined) throw new ProtocolError('HeaderMismatch', `Invalid ${display} header value`);
  if (value !== expected) {
    throw new ProtocolError('HeaderMismatch', `${display} header does not match the request body`, {
      header: display,
      headerValue: value,
      bodyValue: expected,
    });
  }
}

const SENTINEL = /^=\?base64\?(.*)\?=$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const PLAIN = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * An `Mcp-Param-*` value as SEP-2243 reads it: `=?base64?…?=` must wrap canonical, padded base64 (else
 * undefined: reject); anything else, including a half-formed sentinel, is a literal plain-ASCII value.
 */
export function decodeParamHeader(raw: string): string | undefined {
  const sentinel = SENTINEL.exec(raw);
  if (sentinel) {
    const inner = sentinel[1] ?? '';
    return BASE64.test(inner) ? Buffer.from(inner, 'base64').toString('utf8') : undefined;
  }
  return raw === '' || PLAIN.test(raw) ? raw : undefined;
}

/**
 * `tools/call` against a tool whose input schema annotates arguments with `x-mcp-header`: each argument
 * present (and not null) must come with its `Mcp-Param-{Name}` header, equal after decoding (integers
 * compared numerically); a header without its argument, a missing one or an invalid value is -32020.
 */
export function checkParamHeaders(inputSchema: unknown, args: unknown, headers: IncomingHttpHeaders): void {
  const declared = paramHeadersOf(inputSchema) ?? [];
  if (declared.length === 0) return;
  const expected = paramHeaderValues(declared, args);
  for (const param of declared) {
    const key = `${HEADER.paramPrefix}${param.header.toLowerCase()}`;
    const raw = headers[key];
    const want = expected[key];
    const display = `Mcp-Param-${param.header}`;
    if (want === undefined) {
      if (raw !== undefined)
        throw new ProtocolError('HeaderMismatch', `${display} sent without its argument`);
      continue;
    }
    if (raw === undefined) throw new ProtocolError('HeaderMismatch', `Missing required ${display} header`);
    const got = typeof raw === 'string' ? decodeParamHeader(raw) : undefined;
    if (got === undefined) throw new ProtocolError('HeaderMismatch', `Invalid ${display} header value`);
    const wanted = decodeParamHeader(want);
    const equal = param.type === 'integer' ? Number(got) === Number(wanted) : got === wanted;
    if (!equal) throw new ProtocolError('HeaderMismatch', `${display} header does not match the argument`);
  }
}
