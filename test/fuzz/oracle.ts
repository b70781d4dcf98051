/**
 * The oracle of the hostile-input test (see requests.ts): renders a generated case as the bytes, headers
 * and path sent, and says what it must get (HTTP status and JSON-RPC code, or answered and forwarded).
 */
import { encodeHeaderValue, META, PROTOCOL_VERSION } from '../../src/protocol';
import type { Base, Expectation, FuzzCase, Mutation, Session } from './requests';
import { CASE_META_KEY, CASE_PARAM, JSON_LIMITS, MAX_BODY_BYTES } from './requests';
import type { RawRequest } from './wire';

const refused = (status: number, code: number | null): Expectation => ({ status: [status], codes: [code] });
const NAMED = new Set([
  'tools/call',
  'prompts/get',
  'resources/read',
  'tasks/get',
  'tasks/update',
  'tasks/cancel',
]);
const NAME_FIELD: Record<string, string> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
  'tools/list': 'cursor',
  'prompts/list': 'cursor',
  'resources/list': 'cursor',
  'resources/templates/list': 'cursor',
  'completion/complete': 'ref',
  'server/discover': '',
};

/**
 * The parameters each method's schema types (a string, an object): given a value of another type, the
 * request must be refused with -32602 and never forwarded.
 */
const TYPED_FIELDS: Record<string, string[]> = {
  'tools/call': ['name', 'arguments'],
  'prompts/get': ['name', 'arguments'],
  'resources/read': ['uri'],
  'resources/subscribe': ['uri'],
  'resources/unsubscribe': ['uri'],
  'tasks/get': ['taskId'],
  'tasks/update': ['taskId', 'inputResponses'],
  'tasks/cancel': ['taskId'],
  'tasks/result': ['taskId'],
  'tasks/list': ['cursor'],
  'tools/list': ['cursor'],
  'prompts/list': ['cursor'],
  'resources/list': ['cursor'],
  'resources/templates/list': ['cursor'],
  'completion/complete': ['ref', 'argument'],
  'logging/setLevel': ['level'],
  initialize: ['protocolVersion', 'capabilities', 'clientInfo'],
};

/** The request for case `n`, and what it must get. Mutations that do not apply fall back to a header one. */
export function render(
  n: number,
  gen: { base: Base; mutation: Mutation },
  sessions: Session[],
  slug: string,
): FuzzCase {
  const { base } = gen;
  const mutation = applicable(base, gen.mutation);
  const path = `/v1/mcp/${slug}`;
  const meta = { ...base.meta, [CASE_META_KEY]: n };
  const frame: Record<string, unknown> = {
    jsonrpc: '2.0',
    ...(!base.notification && { id: base.id }),
    method: base.method,
    params: { ...base.params, [CASE_PARAM]: n, _meta: meta },
  };
  const headers: Record<string, string> = { 'content-type': 'application/json', ...base.headers };
  if (base.era === '2026') {
    headers['mcp-protocol-version'] = PROTOCOL_VERSION;
    headers['mcp-method'] = base.method;
    const field = NAME_FIELD[base.method];
    const name = field && NAMED.has(base.method) ? base.params[field] : undefined;
    if (typeof name === 'string') headers['mcp-name'] = encodeHeaderValue(name);
  } else if (base.initialize) {
    headers.accept ??= 'application/json, text/event-stream';
  } else {
    const s = sessions[base.session ?? 0] as Session;
    headers['mcp-session-id'] = s.id;
    if (base.versionHeader) headers['mcp-protocol-version'] = s.version;
    headers.accept ??= 'application/json, text/event-stream';
  }
  const r: RawRequest = { method: 'POST', path, headers, body: Buffer.alloc(0) };
  let text: string | undefined;
  let expect: Expectation | undefined;
  const params = frame.params as Record<string, unknown>;
  switch (mutation.kind) {
    case 'valid':
      if (base.notification) expect = refused(202, null);
      break;
    case 'valid-large': {
      // As many members as one object may have (the other keys of `_meta` are fewer than 20), and well
      // within the keys and containers of a whole request.
      const m = params._meta as Record<string, unknown>;
      const room = JSON_LIMITS.maxJsonMembers - Object.keys(m).length;
      for (let i = 0; i < room; i++) m[`com.example.fuzz/k${i}`] = i;
      if (base.notification) expect = refused(202, null);
      break;
    }
    case 'many-members': {
      const big = wideObject(JSON_LIMITS.maxJsonMembers + 1);
      if (mutation.where === 'meta') Object.assign(params._meta as Record<string, unknown>, big);
      else params.bulk = big;
      text = cutShort(JSON.stringify(frame), mutation.broken);
      expect = refused(400, -32600);
      break;
    }
    case 'many-keys': {
      // Objects each within the members limit, together over the keys limit.
      const per = JSON_LIMITS.maxJsonMembers;
      params.bulk = Array.from({ length: Math.ceil(JSON_LIMITS.maxJsonKeys / per) + 1 }, () =>
        wideObject(per),
      );
      text = cutShort(JSON.stringify(frame), mutation.broken);
      expect = refused(400, -32600);
      break;
    }
    case 'many-containers':
      params.bulk = Array.from({ length: JSON_LIMITS.maxJsonContainers + 1 }, () => []);
      text = cutShort(JSON.stringify(frame), mutation.broken);
      expect = refused(400, -32600);
      break;
    case 'bad-json':
      text = JSON.stringify(frame);
      text = text.slice(0, Math.max(1, Math.floor(text.length * mutation.cut)));
      expect = refused(400, -32700);
      break;
    case 'invalid-utf8': {
      params.note = 'BAD-UTF8-HERE';
      const json = Buffer.from(JSON.stringify(frame), 'utf8');
      const at = json.indexOf('BAD-UTF8-HERE');
      r.body = Buffer.concat([json.subarray(0, at), Buffer.from(mutation.bytes), json.subarray(at + 13)]);
      expect = refused(400, -32700);
      break;
    }
    case 'not-an-object':
      text = mutation.raw === '[REQ]' ? JSON.stringify([frame]) : mutation.raw;
      expect = refused(400, -32600);
      break;
    case 'bad-jsonrpc':
      text = JSON.stringify(frame).replace(
        '"jsonrpc":"2.0",',
        mutation.raw === undefined ? '' : `"jsonrpc":${mutation.raw},`,
      );
      expect = refused(400, -32600);
      break;
    case 'bad-id':
      text = JSON.stringify({ ...frame, id: 'ID-HERE' }).replace('"ID-HERE"', mutation.raw);
      expect = refused(400, -32600);
      break;
    case 'extra-member':
      frame.extra = true;
      expect = refused(400, -32600);
      break;
    case 'bad-method':
      text = JSON.stringify({ ...frame, method: 'METHOD-HERE' }).replace('"METHOD-HERE"', mutation.raw);
      expect = refused(400, -32600);
      break;
    case 'unknown-method':
      frame.method = mutation.method;
      headers['mcp-method'] = encodeHeaderValue(mutation.method);
      expect = refused(404, -32601);
      break;
    case 'bad-params':
      text = JSON.stringify({ ...frame, params: 'PARAMS-HERE' }).replace('"PARAMS-HERE"', mutation.raw);
      expect = refused(400, -32600);
      break;
    case 'no-meta': {
      const v = mutation.variant;
      if (v === 0) delete params._meta;
      else if (v === 1) delete (params._meta as Record<string, unknown>)[META.protocolVersion];
      else if (v === 2) delete (params._meta as Record<string, unknown>)[META.clientCapabilities];
      else if (v === 3) (params._meta as Record<string, unknown>)[META.clientCapabilities] = 'all';
      else params._meta = [n];
      expect = refused(400, -32602);
      break;
    }
    case 'bad-meta-type':
      (params._meta as Record<string, unknown>)[
        mutation.field === 'logLevel' ? META.logLevel : 'progressToken'
      ] = mutation.raw;
      expect = refused(400, -32602);
      break;
    case 'unsupported-version':
      (params._meta as Record<string, unknown>)[META.protocolVersion] = mutation.version;
      headers['mcp-protocol-version'] = mutation.version;
      expect = refused(400, -32022);
      break;
    case 'header': {
      const key = { version: 'mcp-protocol-version', method: 'mcp-method', name: 'mcp-name' }[mutation.which];
      if (mutation.how === 'missing') delete headers[key];
      else if (mutation.how === 'other')
        headers[key] = mutation.which === 'version' ? '2025-06-18' : `${headers[key] ?? ''}x`;
      else headers[key] = '=?base64?@@@@?=';
      expect = refused(400, -32020);
      break;
    }
    case 'param-type': {
      const fields = TYPED_FIELDS[base.method] as string[];
      params[fields[mutation.pick % fields.length] as string] = mutation.raw;
      expect = refused(200, -32602);
      break;
    }
    case 'init-version':
      params.protocolVersion = mutation.version;
      expect = refused(200, -32602);
      break;
    case 'listen':
      frame.method = 'subscriptions/listen';
      headers['mcp-method'] = 'subscriptions/listen';
      delete headers['mcp-name'];
      frame.params = { [CASE_PARAM]: n, _meta: meta };
      if (mutation.how === 'json-only') {
        headers.accept = 'application/json';
        expect = refused(400, -32600);
      } else {
        headers.accept = 'application/json, text/event-stream';
        (frame.params as Record<string, unknown>).notifications = mutation.filter;
        expect = refused(200, -32602);
      }
      break;
    case 'param-header':
      if (mutation.how === 'missing') delete headers['mcp-param-region'];
      else headers['mcp-param-region'] = `${headers['mcp-param-region'] ?? 'x'}-other`;
      expect = refused(400, -32020);
      break;
    case 'tasks-undeclared':
      (params._meta as Record<string, unknown>)[META.clientCapabilities] = {};
      expect = refused(400, -32021);
      break;
    case 'content-type':
      if (mutation.value === '') delete headers['content-type'];
      else headers['content-type'] = mutation.value;
      expect = refused(415, -32600);
      break;
    case 'content-encoding':
      headers['content-encoding'] = mutation.value;
      expect = refused(415, -32600);
      break;
    case 'too-large':
      params.padding = 'p'.repeat(MAX_BODY_BYTES);
      expect = refused(413, -32600);
      break;
    case 'too-deep':
      params.deep = JSON.parse('['.repeat(200) + ']'.repeat(200)) as unknown;
      expect = refused(400, -32602);
      break;
    case 'http-method':
      r.method = mutation.method;
      expect = refused(405, null);
      break;
    case 'below-endpoint':
      r.path = `${path}/below`;
      expect = refused(404, -32601);
      break;
    case 'foreign-origin':
      headers.origin = 'http://evil.example';
      expect = refused(403, -31006);
      break;
    case 'notification':
      delete frame.id;
      expect = refused(202, null);
      break;
    case 'duplicate-member': {
      const json = JSON.stringify(frame);
      text =
        mutation.where === 'frame'
          ? json.replace('"jsonrpc":"2.0",', `"jsonrpc":"2.0","method":"tools/list",`)
          : json.replace(`"${CASE_META_KEY}":`, `"${CASE_META_KEY}":-1,"${CASE_META_KEY}":`);
      // `"method"` follows `"jsonrpc"` in the text, so either way a name really appears twice.
      expect = refused(400, -32600);
      break;
    }
    case 'unknown-project':
      r.path = '/v1/mcp/no-such-project';
      expect = refused(401, -31007);
      break;
    case 'locked':
      r.path = '/v1/mcp/locked';
      if (mutation.token !== undefined) headers.authorization = `Bearer ${mutation.token}`;
      expect = refused(401, -31007);
      break;
    case 'bad-session':
      headers['mcp-session-id'] = mutation.id;
      expect = refused(404, -32001);
      break;
    case 'bad-version-header':
      headers['mcp-protocol-version'] = mutation.version;
      expect = { status: [400], codes: [-32600, -32022] };
      break;
  }
  if (r.body.length === 0) r.body = Buffer.from(text ?? JSON.stringify(frame), 'utf8');
  return {
    n,
    echoesId: ECHOES_ID.has(mutation.kind) && !base.notification,
    id: base.id,
    method: `${base.era}/${base.method}`,
    mutation: mutation.kind,
    request: r,
    ...(expect && { expect }),
    forwardsOnce: isValid(mutation.kind) && base.forwards,
    era: base.era,
  };
}

/** Mutations that leave the request valid: answered, and forwarded where the method is. */
export function isValid(mutation: string): boolean {
  return mutation === 'valid' || mutation === 'valid-large';
}

/** An object with `members` distinct names. */
function wideObject(members: number): Record<string, number> {
  return Object.fromEntries(Array.from({ length: members }, (_, i) => [`k${i}`, i]));
}

/** The text cut before its end when `broken`: no longer JSON, and yet refused for its shape first. */
function cutShort(text: string, broken: boolean): string {
  return broken ? text.slice(0, -3) : text;
}

/** Refusals decided after the frame was read: the error carries the request's id. */
const ECHOES_ID = new Set<string>([
  'valid',
  'valid-large',
  'unknown-method',
  'no-meta',
  'bad-meta-type',
  'unsupported-version',
  'header',
  'param-type',
  'param-header',
  'tasks-undeclared',
  'bad-session',
  'bad-version-header',
  'init-version',
  'listen',
]);

/** A mutation that says something about this request; otherwise a header mismatch (always applies). */
function applicable(base: Base, m: Mutation): Mutation {
  const fallback: Mutation =
    base.era === '2026'
      ? { kind: 'header', which: 'method', how: 'other' }
      : { kind: 'bad-session', id: 's-x' };
  if (base.era === '2025' && base.notification && m.kind !== 'valid')
    return { kind: 'not-an-object', raw: '[REQ]' };
  switch (m.kind) {
    case 'header':
      return m.which === 'name' && !NAMED.has(base.method) ? fallback : m;
    case 'param-type':
      return TYPED_FIELDS[base.method] ? m : fallback;
    case 'listen':
      return base.era === '2026' ? m : fallback;
    case 'param-header':
      return base.method === 'tools/call' &&
        base.params.name === 'test_custom_headers' &&
        'mcp-param-region' in base.headers
        ? m
        : fallback;
    case 'tasks-undeclared':
      return base.method.startsWith('tasks/') ? m : fallback;
    default:
      return m;
  }
}
