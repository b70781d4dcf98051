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
