/**
 * The per-request checks of MCP 2026-07-28, in the order the spec's error codes imply: the `_meta`
 * envelope (-32602, HTTP 400), the headers that repeat body fields (-32020), then the version itself
 * (-32022). A supported header over an unsupported body version is a mismatch, not an unsupported
 * version, so headers are judged before the version.
 */
import type { JsonRpcRequest, RequestMeta } from '../../protocol';
import {
  decodeHeaderValue,
  HEADER,
  LogLevelSchema,
  META,
  nameFieldFor,
  ProtocolError,
  RequestMetaSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '../../protocol';

/** The request's validated envelope; throws the spec's error for the first rule it breaks. */
export function checkedEnvelope(message: JsonRpcRequest, header: (name: string) => string): RequestMeta {
  const meta = validateEnvelope(message);
  validateHeaders(header, message, meta);
  validateVersion(meta);
  return meta;
}

function validateEnvelope(message: JsonRpcRequest): RequestMeta {
  const meta = parseEnvelope(message.params?._meta);
  if (!meta.success) {
    throw new ProtocolError(
      'MissingRequestMeta',
      `params._meta must carry ${META.protocolVersion} and ${META.clientCapabilities}`,
    );
  }
  // Optional keys the gateway acts on must have their spec type: a wrong one is the client's mistake.
  const token = meta.data['progressToken'];
  if (token !== undefined && typeof token !== 'string' && !Number.isInteger(token)) {
    throw new ProtocolError(
      'MissingRequestMeta',
      'params._meta.progressToken must be a string or an integer',
    );
  }
  const level = meta.data[META.logLevel];
  if (level !== undefined && !LogLevelSchema.safeParse(level).success) {
    throw new ProtocolError('MissingRequestMeta', `params._meta["${META.logLevel}"] must be a logging level`);
  }
  return meta.data;
}

/**
 * `RequestMetaSchema` applied to the keys it names only: the schema would copy every other key into a
 * new object, which for a `_meta` of thousands of vendor keys costs far more than the request's bytes.
 * The validated keys are written back onto the request's own (freshly parsed) `_meta`, so the result is
 * what the schema returns, without the copy.
 */
function parseEnvelope(raw: unknown): { success: true; data: RequestMeta } | { success: false } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { success: false };
  const meta = raw as Record<string, unknown>;
  const named: Record<string, unknown> = {};
  for (const key of ENVELOPE_KEYS) if (meta[key] !== undefined) named[key] = meta[key];
  const parsed = RequestMetaSchema.safeParse(named);
  if (!parsed.success) return { success: false };
  return { success: true, data: Object.assign(meta, parsed.data) };
}

const ENVELOPE_KEYS = Object.keys(RequestMetaSchema.shape);

function validateVersion(meta: RequestMeta): void {
  const requested = meta[META.protocolVersion];
  if (!SUPPORTED_PROTOCOL_VERSIONS.includes(requested)) {
    throw new ProtocolError('UnsupportedProtocolVersion', 'Unsupported protocol version', {
      supported: [...SUPPORTED_PROTOCOL_VERSIONS],
      requested,
    });
  }
}

/** Headers that repeat body fields must be present and equal (after decoding). */
function validateHeaders(header: (name: string) => string, message: JsonRpcRequest, meta: RequestMeta): void {
  const check = (name: string, expected: string, label: string) => {
    const raw = header(name);
    if (raw === '') throw new ProtocolError('HeaderMismatch', `Missing ${label} header`);
    if (decodeHeaderValue(raw) !== expected) {
      throw new ProtocolError('HeaderMismatch', `${label} header does not match the request body`);
    }
  };
  check(HEADER.protocolVersion, meta[META.protocolVersion], 'MCP-Protocol-Version');
  check(HEADER.method, message.method, 'Mcp-Method');
  const field = nameFieldFor(message.method);
  const value = field ? message.params?.[field] : undefined;
  if (field && typeof value === 'string') check(HEADER.name, value, 'Mcp-Name');
}
