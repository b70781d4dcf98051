/**
 * Generated requests for the hostile-input test, with their oracle. A case is a *valid* request (every
 * 2026 method the gateway serves, and the 2025-era session methods) with, most of the time, exactly one
 * *mutation* that the spec says must be refused before any work: broken JSON or UTF-8, a bad frame, an
 * unknown method, a bad `_meta`, a header that disagrees with the body, wrong parameter types, a wrong
 * media type, a body too large or too deep, a foreign origin, a bad session... Each mutation states the
 * answer it must get (HTTP status and JSON-RPC code); a valid request must be answered (HTTP 200) and
 * may reach the upstream, a mutated one never. Every request carries its case number in `_meta` and in
 * its params, so the upstream side can tell which requests reached it.
 */
import fc from 'fast-check';
import {
  encodeHeaderValue,
  LogLevelSchema,
  META,
  PROTOCOL_VERSION,
  TASKS_EXTENSION,
} from '../../src/protocol';
import type { RawRequest } from './wire';

export const CASE_META_KEY = 'com.taskrouter.fuzz/case';
export const CASE_PARAM = 'fuzzCase';
/** The gateway's configured body limit in this test (small, so "too large" is cheap to send). */
export const MAX_BODY_BYTES = 64 * 1024;
/**
 * The gateway's configured JSON shape limits in this test (`http.maxJson*`), small enough that a body
 * over each fits in MAX_BODY_BYTES.
 */
export const JSON_LIMITS = { maxJsonMembers: 500, maxJsonKeys: 2_000, maxJsonContainers: 2_000 };

/** What a case must be answered with: statuses, and JSON-RPC codes (`null`: no body at all). */
export interface Expectation {
  status: number[];
  codes: Array<number | null>;
}

export interface FuzzCase {
  n: number;
  /** The answer must carry the request's id (the frame was read before the refusal). */
  echoesId: boolean;
  id: unknown;
  /** `2026/<method>` or `2025/<method>`, then the mutation applied (`valid` for none). */
  method: string;
  mutation: string;
  request: RawRequest;
  /** Undefined for a valid request: answered with HTTP 200 and a result or an expected error. */
  expect?: Expectation;
  /** A valid request the gateway forwards to the upstream exactly once. */
  forwardsOnce: boolean;
  /** 2025-era results have no `resultType`. */
  era: '2026' | '2025';
}

export interface Session {
  id: string;
  version: string;
}

interface Base {
  era: '2026' | '2025';
  method: string;
  params: Record<string, unknown>;
  /** 2026: the whole envelope; 2025: optional request `_meta` keys. */
  meta: Record<string, unknown>;
  headers: Record<string, string>;
  id: string | number;
  forwards: boolean;
  /** 2025: which session of the pool. */
  session?: number;
  /** 2025: send MCP-Protocol-Version (else the session's version is implied). */
  versionHeader?: boolean;
  notification?: boolean;
  /** 2025: an `initialize` (no session yet; a valid one opens a new session). */
  initialize?: boolean;
}

// ── valid requests ──────────────────────────────────────────────────────────────────────────────────

const printable = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
});
const anyText = fc.string({ unit: 'binary', maxLength: 40 });

const requestId = fc.oneof(
  { weight: 5, arbitrary: fc.integer({ min: -1_000_000, max: 1_000_000_000 }) },
  { weight: 1, arbitrary: fc.maxSafeInteger() },
  { weight: 1, arbitrary: fc.constant(Number.MAX_SAFE_INTEGER) },
  { weight: 4, arbitrary: anyText },
  { weight: 1, arbitrary: fc.constant('i'.repeat(10_000)) },
);

const capabilities = fc.oneof(
  { weight: 10, arbitrary: fc.constant({}) },
  { weight: 3, arbitrary: fc.constant({ elicitation: { form: {} } }) },
  { weight: 2, arbitrary: fc.constant({ sampling: {}, roots: {} }) },
  { weight: 2, arbitrary: fc.constant({ extensions: { 'com.example/ext': { level: 2 } } }) },
  { weight: 1, arbitrary: fc.constant({ extensions: { [TASKS_EXTENSION]: {} } }) },
);

/** Optional `_meta` keys of any kind: vendor and unknown reserved keys with any JSON, and the typed ones. */
const metaExtras = fc
  .record(
    {
      vendor: fc.dictionary(
        fc.constantFrom(
          'com.example/trace',
          'org.acme.tools/x',
          'io.modelcontextprotocol/unknownKey',
          'dev.mcp/y',
        ),
        fc.jsonValue({ maxDepth: 3 }),
        { maxKeys: 3 },
      ),
      progressToken: fc.oneof(printable, fc.integer()),
      logLevel: fc.constantFrom(...LogLevelSchema.options),
      traceparent: printable,
      clientInfo: fc.record({ name: anyText, version: printable }),
    },
    { requiredKeys: [] },
  )
  .map(({ vendor, progressToken, logLevel, traceparent, clientInfo }) => ({
    ...vendor,
    ...(progressToken !== undefined && { progressToken }),
    ...(logLevel !== undefined && { [META.logLevel]: logLevel }),
    ...(traceparent !== undefined && { traceparent }),
    ...(clientInfo !== undefined && { [META.clientInfo]: clientInfo }),
  }));

const extraHeaders = fc.dictionary(
  fc.constantFrom(
    'x-fuzz',
    'x-request-id',
    'user-agent',
    'mcp-param-unknown',
    'traceparent',
    'x-forwarded-for',
    'referer',
  ),
  printable,
  { maxKeys: 3 },
);

const accept = fc.constantFrom(
  'application/json, text/event-stream',
  'application/json, text/event-stream',
  'application/json',
  'text/event-stream, application/json',
  '*/*',
  '',
);

const extraArguments = fc.dictionary(
  fc.constantFrom('extra', 'nested', 'list'),
  fc.jsonValue({ maxDepth: 2 }),
  { maxKeys: 2 },
);

const toolCall = fc.oneof(
  fc.record({ name: anyText, extra: extraArguments }).map(({ name, extra }) => ({
    params: { name: 'greet', arguments: { ...extra, name } },
    headers: {},
  })),
  fc.constant({ params: { name: 'test_simple_text', arguments: {} }, headers: {} }),
  fc.constant({ params: { name: 'test_error_handling' }, headers: {} }),
  fc
    .record({
      region: fc.option(anyText, { nil: undefined }),
      priority: fc.option(fc.integer(), { nil: undefined }),
    })
    .map(({ region, priority }) => ({
      params: {
        name: 'test_custom_headers',
        arguments: { ...(region !== undefined && { region }), ...(priority !== undefined && { priority }) },
      },
      headers: {
        ...(region !== undefined && { 'mcp-param-region': encodeHeaderValue(region) }),
        ...(priority !== undefined && { 'mcp-param-priority': String(priority) }),
      },
    })),
  printable.map((s) => ({ params: { name: `no_such_tool_${s}`, arguments: {} }, headers: {} })),
);

const taskId = fc.oneof(
  fc.uint8Array({ minLength: 24, maxLength: 24 }).map((b) => `trt_${Buffer.from(b).toString('base64url')}`),
  anyText.filter((s) => s.length > 0),
);

/** A 2026 method with valid params: [method, params, extra headers, forwarded to the upstream once]. */
const modernCall: fc.Arbitrary<[string, Record<string, unknown>, Record<string, string>, boolean]> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.constant(['server/discover', {}, {}, false] as [
      string,
      Record<string, unknown>,
      Record<string, string>,
      boolean,
    ]),
  },
  {
    weight: 4,
    arbitrary: fc
      .constantFrom('tools/list', 'prompts/list', 'resources/list', 'resources/templates/list')
      .map((m) => [m, {}, {}, true] as [string, Record<string, unknown>, Record<string, string>, boolean]),
  },
  {
    weight: 8,
    arbitrary: toolCall.map(
      (c) =>
        ['tools/call', c.params, c.headers, true] as [
          string,
          Record<string, unknown>,
          Record<string, string>,
          boolean,
        ],
    ),
  },
  {
    weight: 2,
    arbitrary: fc
      .oneof(
        fc.constant({ name: 'test_simple_prompt' }),
        fc
          .record({ a: anyText, b: anyText })
          .map(({ a, b }) => ({ name: 'test_prompt_with_arguments', arguments: { arg1: a, arg2: b } })),
      )
      .map(
        (p) =>
          ['prompts/get', p, {}, true] as [string, Record<string, unknown>, Record<string, string>, boolean],
      ),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom('test://static-text', 'test://static-binary', 'test://template/7/data', 'test://missing')
      .map(
        (uri) =>
          ['resources/read', { uri }, {}, true] as [
            string,
            Record<string, unknown>,
            Record<string, string>,
            boolean,
          ],
      ),
  },
  {
    weight: 1,
    arbitrary: anyText.map(
      (value) =>
        [
          'completion/complete',
          {
            ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
            argument: { name: 'arg1', value },
          },
          {},
          true,
        ] as [string, Record<string, unknown>, Record<string, string>, boolean],
    ),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.constantFrom('tasks/get', 'tasks/update', 'tasks/cancel'), taskId)
      .map(
        ([m, id]) =>
          [m, { taskId: id, ...(m === 'tasks/update' && { inputResponses: {} }) }, {}, false] as [
            string,
            Record<string, unknown>,
            Record<string, string>,
            boolean,
          ],
      ),
  },
);

/** Members a method's params do not define: servers SHOULD ignore them (and forward them unchanged). */
const unknownParams = fc.dictionary(
  fc.constantFrom('hint', 'com.example/option', 'unknownFlag', 'nested'),
  fc.jsonValue({ maxDepth: 2 }),
  { maxKeys: 2 },
);

const modernBase: fc.Arbitrary<Base> = fc
  .record({
    call: modernCall,
    unknown: unknownParams,
    caps: capabilities,
    extras: metaExtras,
    headers: extraHeaders,
    accept,
    id: requestId,
  })
  .map(
    ({ call: [method, params, headers, forwards], unknown, caps, extras, headers: extra, accept: a, id }) => {
      // Follow-ups need the Tasks extension (its absence is a mutation of its own).
      const c = method.startsWith('tasks/') ? { ...caps, extensions: { [TASKS_EXTENSION]: {} } } : caps;
      return {
        era: '2026' as const,
        method,
        params: { ...unknown, ...params },
        meta: { ...extras, [META.protocolVersion]: PROTOCOL_VERSION, [META.clientCapabilities]: c },
        headers: { ...extra, ...headers, ...(a !== '' && { accept: a }) },
        id,
        forwards,
      };
    },
  );

/** A 2025-era session request: [method, params, forwarded once, 2025-11-25 session only, notification]. */
const legacyCall: fc.Arbitrary<[string, Record<string, unknown>, boolean, boolean, boolean]> = fc.oneof(
  fc
    .constantFrom('tools/list', 'prompts/list', 'resources/list')
    .map((m) => [m, {}, true, false, false] as [string, Record<string, unknown>, boolean, boolean, boolean]),
  anyText.map(
    (name) =>
      ['tools/call', { name: 'greet', arguments: { name } }, true, false, false] as [
        string,
        Record<string, unknown>,
        boolean,
        boolean,
        boolean,
      ],
  ),
  fc.constant(['resources/read', { uri: 'test://static-text' }, true, false, false] as [
    string,
    Record<string, unknown>,
    boolean,
    boolean,
    boolean,
  ]),
  fc.constant(['ping', {}, false, false, false] as [
    string,
    Record<string, unknown>,
    boolean,
    boolean,
    boolean,
  ]),
  fc
    .constantFrom('debug', 'info', 'error')
    .map(
      (level) =>
        ['logging/setLevel', { level }, false, false, false] as [
          string,
          Record<string, unknown>,
          boolean,
          boolean,
          boolean,
        ],
    ),
  fc.constant(['resources/subscribe', { uri: 'test://static-text' }, false, false, false] as [
    string,
    Record<string, unknown>,
    boolean,
    boolean,
    boolean,
  ]),
  taskId.map(
    (id) =>
      ['tasks/get', { taskId: id }, false, true, false] as [
        string,
        Record<string, unknown>,
        boolean,
        boolean,
        boolean,
      ],
  ),
  fc
    .tuple(fc.constantFrom('tasks/cancel', 'tasks/result'), taskId)
    .map(
      ([m, id]) =>
        [m, { taskId: id }, false, true, false] as [
          string,
          Record<string, unknown>,
          boolean,
          boolean,
          boolean,
        ],
    ),
  fc.constant(['prompts/get', { name: 'test_simple_prompt' }, true, false, false] as [
    string,
    Record<string, unknown>,
    boolean,
    boolean,
    boolean,
  ]),
  fc.constant(['resources/templates/list', {}, true, false, false] as [
    string,
    Record<string, unknown>,
    boolean,
    boolean,
    boolean,
  ]),
  anyText.map(
    (value) =>
      [
        'completion/complete',
        {
          ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
          argument: { name: 'arg1', value },
        },
        true,
        false,
        false,
      ] as [string, Record<string, unknown>, boolean, boolean, boolean],
  ),
  fc.constant(['resources/unsubscribe', { uri: 'test://static-text' }, false, false, false] as [
    string,
    Record<string, unknown>,
    boolean,
    boolean,
    boolean,
  ]),
  fc.constant(['tasks/list', {}, false, true, false] as [
    string,
    Record<string, unknown>,
    boolean,
    boolean,
    boolean,
  ]),
  fc.constant(['notifications/initialized', {}, false, false, true] as [
    string,
    Record<string, unknown>,
    boolean,
    boolean,
    boolean,
  ]),
);

const legacyBase: fc.Arbitrary<Base> = fc
  .record({
    call: legacyCall,
    unknown: unknownParams,
    session: fc.integer({ min: 0, max: 2 }),
    versionHeader: fc.boolean(),
    token: fc.option(fc.oneof(printable, fc.integer()), { nil: undefined }),
    headers: extraHeaders,
    id: requestId,
  })
  .map(
    ({
      call: [method, params, forwards, newestOnly, notification],
      unknown,
      session,
      versionHeader,
      token,
      headers,
      id,
    }) => ({
      era: '2025' as const,
      method,
      params: { ...unknown, ...params },
      meta: token === undefined ? {} : { progressToken: token },
      headers,
      id,
      forwards,
      session: newestOnly ? 0 : session,
      versionHeader,
      notification,
    }),
  );

/** A 2025-era `initialize` of any supported version, with the era's capabilities and any client name. */
const legacyInit: fc.Arbitrary<Base> = fc
  .record({
    version: fc.constantFrom('2025-11-25', '2025-06-18', '2025-03-26'),
    capabilities: fc.constantFrom<Record<string, unknown>>(
      {},
      { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      { elicitation: {} },
      { elicitation: { form: {}, url: {} } },
      { sampling: {}, roots: { listChanged: true } },
      { experimental: { 'com.example/x': { on: true } } },
    ),
    clientInfo: fc.record({ name: anyText, version: printable }),
    headers: extraHeaders,
    id: requestId,
  })
  .map(({ version, capabilities, clientInfo, headers, id }) => ({
    era: '2025' as const,
    method: 'initialize',
    params: { protocolVersion: version, capabilities, clientInfo },
    meta: {},
    headers,
    id,
    forwards: false,
    initialize: true,
  }));

// ── mutations ───────────────────────────────────────────────────────────────────────────────────────

type Mutation =
  | { kind: 'valid' }
  /** Valid, with an object as large as the limits allow in `_meta` (relayed upstream unchanged). */
  | { kind: 'valid-large' }
  /** Over a shape limit; `broken`: the JSON is cut short too, and still the shape is refused first. */
  | { kind: 'many-members'; where: 'meta' | 'params'; broken: boolean }
  | { kind: 'many-keys'; broken: boolean }
  | { kind: 'many-containers'; broken: boolean }
  | { kind: 'bad-json'; cut: number }
  | { kind: 'invalid-utf8'; bytes: number[] }
  | { kind: 'not-an-object'; raw: string }
  | { kind: 'bad-jsonrpc'; raw: string | undefined }
  | { kind: 'bad-id'; raw: string }
  | { kind: 'extra-member' }
  | { kind: 'bad-method'; raw: string }
  | { kind: 'unknown-method'; method: string }
  | { kind: 'bad-params'; raw: string }
  | { kind: 'no-meta'; variant: number }
  | { kind: 'bad-meta-type'; field: 'progressToken' | 'logLevel'; raw: unknown }
  | { kind: 'unsupported-version'; version: string }
  | { kind: 'header'; which: 'version' | 'method' | 'name'; how: 'missing' | 'other' | 'invalid' }
  | { kind: 'param-type'; raw: unknown; pick: number }
  | { kind: 'param-header'; how: 'missing' | 'other' }
  | { kind: 'tasks-undeclared' }
  | { kind: 'content-type'; value: string }
  | { kind: 'content-encoding'; value: string }
  | { kind: 'too-large' }
  | { kind: 'too-deep' }
  | { kind: 'http-method'; method: string }
  | { kind: 'below-endpoint' }
  | { kind: 'foreign-origin' }
  | { kind: 'notification' }
  | { kind: 'duplicate-member'; where: 'frame' | 'meta' }
  | { kind: 'unknown-project' }
  | { kind: 'locked'; token: string | undefined }
  | { kind: 'bad-session'; id: string }
  | { kind: 'bad-version-header'; version: string }
  | { kind: 'init-version'; version: string }
  | { kind: 'listen'; how: 'json-only' | 'bad-filter'; filter?: unknown };

/** A parameter the spec types, given a value of another type. */
const paramType: fc.Arbitrary<Mutation> = fc
  .record({ raw: fc.constantFrom<unknown>(42, true, ['x'], null, 1.5), pick: fc.nat(5) })
  .map(({ raw, pick }): Mutation => ({ kind: 'param-type', raw, pick }));

const frameMutations: fc.Arbitrary<Mutation>[] = [
  fc.double({ min: 0, max: 0.999, noNaN: true }).map((cut): Mutation => ({ kind: 'bad-json', cut })),
  fc
    .constantFrom([0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80])
    .map((bytes): Mutation => ({ kind: 'invalid-utf8', bytes: [...bytes] })),
  fc
    .constantFrom('text/plain', '', 'application/x-www-form-urlencoded', 'application/jsonp')
    .map((value): Mutation => ({ kind: 'content-type', value })),
  fc
    .constantFrom('frame' as const, 'meta' as const)
    .map((where): Mutation => ({ kind: 'duplicate-member', where })),
  fc.constantFrom('gzip', 'deflate', 'br').map((value): Mutation => ({ kind: 'content-encoding', value })),
  fc.constant<Mutation>({ kind: 'too-large' }),
  fc
    .record({ where: fc.constantFrom('meta' as const, 'params' as const), broken: fc.boolean() })
    .map(({ where, broken }): Mutation => ({ kind: 'many-members', where, broken })),
  fc.boolean().map((broken): Mutation => ({ kind: 'many-keys', broken })),
  fc.boolean().map((broken): Mutation => ({ kind: 'many-containers', broken })),
];

const modernMutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 30, arbitrary: fc.constant({ kind: 'valid' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'valid-large' as const }) },
  ...frameMutations.map((arbitrary) => ({ weight: 3, arbitrary })),
  {
    weight: 3,
    arbitrary: fc
      .constantFrom('[REQ]', '42', '"x"', 'null', 'true')
      .map((raw) => ({ kind: 'not-an-object' as const, raw })),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(undefined, '"1.0"', '2', 'null')
      .map((raw) => ({ kind: 'bad-jsonrpc' as const, raw })),
  },
  {
    weight: 3,
    arbitrary: fc
      .constantFrom('{}', '[]', 'true', '1.5', '1e300', '9007199254740993', 'null')
      .map((raw) => ({ kind: 'bad-id' as const, raw })),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'extra-member' as const }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('42', '""', '{}').map((raw) => ({ kind: 'bad-method' as const, raw })),
  },
  {
    weight: 4,
    arbitrary: fc
      .oneof(
        fc.constantFrom(
          'ping',
          'initialize',
          'logging/setLevel',
          'resources/subscribe',
          'resources/unsubscribe',
          'tasks/list',
          'tasks/result',
          'tools/destroy',
          'notifications/initialized',
        ),
        printable.map((s) => `x/${s}`),
      )
      .map((method) => ({ kind: 'unknown-method' as const, method })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom('[]', '"x"', '5').map((raw) => ({ kind: 'bad-params' as const, raw })),
  },
  {
    weight: 4,
    arbitrary: fc.integer({ min: 0, max: 4 }).map((variant) => ({ kind: 'no-meta' as const, variant })),
  },
  {
    weight: 2,
    arbitrary: fc.oneof(
      fc
        .constantFrom<unknown>({}, true, 1.5, [1])
        .map((raw) => ({ kind: 'bad-meta-type' as const, field: 'progressToken' as const, raw })),
      fc
        .constantFrom<unknown>('loud', 3, 'INFO')
        .map((raw) => ({ kind: 'bad-meta-type' as const, field: 'logLevel' as const, raw })),
    ),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom('1900-01-01', '2025-11-25', '2026-07-29', 'latest')
      .map((version) => ({ kind: 'unsupported-version' as const, version })),
  },
  {
    weight: 6,
    arbitrary: fc
      .record({
        which: fc.constantFrom('version' as const, 'method' as const, 'name' as const),
        how: fc.constantFrom('missing' as const, 'other' as const, 'invalid' as const),
      })
      .map((h) => ({ kind: 'header' as const, ...h })),
  },
  { weight: 3, arbitrary: paramType },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom('missing' as const, 'other' as const)
      .map((how) => ({ kind: 'param-header' as const, how })),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'tasks-undeclared' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'too-deep' as const }) },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom('GET', 'PUT', 'PATCH', 'DELETE')
      .map((method) => ({ kind: 'http-method' as const, method })),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'below-endpoint' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'foreign-origin' as const }) },
  { weight: 3, arbitrary: fc.constant({ kind: 'notification' as const }) },
  {
    weight: 2,
    arbitrary: fc.oneof(
      fc.constant<Mutation>({ kind: 'listen', how: 'json-only' }),
      fc
        .constantFrom<unknown>(
          'garbage',
          42,
          [],
          { taskIds: 'trt_x' },
          { taskIds: [1, 2] },
          { toolsListChanged: 'yes' },
          { resourceSubscriptions: [{ uri: 'test://static-text' }] },
          { taskIds: ['x'.repeat(201)] },
        )
        .map((filter): Mutation => ({ kind: 'listen', how: 'bad-filter', filter })),
    ),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'unknown-project' as const }) },
  {
    weight: 1,
    arbitrary: fc
      .option(printable, { nil: undefined })
      .map((t) => ({ kind: 'locked' as const, token: t === undefined ? undefined : `trp_${t}` })),
  },
);

const legacyMutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 12, arbitrary: fc.constant({ kind: 'valid' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'valid-large' as const }) },
  ...frameMutations.map((arbitrary) => ({ weight: 1, arbitrary })),
  {
    weight: 3,
    arbitrary: fc
      .oneof(printable, fc.constant(''))
      .map((id) => ({ kind: 'bad-session' as const, id: `s-${id}` })),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom('2024-11-05', '2026-07-28', 'garbage')
      .map((version) => ({ kind: 'bad-version-header' as const, version })),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'not-an-object' as const, raw: '[REQ]' }) },
  { weight: 2, arbitrary: paramType },
);

const initMutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 8, arbitrary: fc.constant({ kind: 'valid' as const }) },
  ...frameMutations.map((arbitrary) => ({ weight: 1, arbitrary })),
  {
    weight: 3,
    arbitrary: fc
      .constantFrom('2024-11-05', '1.0', '2026-07-28', '', '2025-11-26')
      .map((version) => ({ kind: 'init-version' as const, version })),
  },
  { weight: 3, arbitrary: paramType },
  { weight: 1, arbitrary: fc.constant({ kind: 'not-an-object' as const, raw: '[REQ]' }) },
);

/** One generated case before rendering: the valid request and its mutation. */
export const caseArbitrary: fc.Arbitrary<{ base: Base; mutation: Mutation }> = fc.oneof(
  { weight: 16, arbitrary: fc.record({ base: modernBase, mutation: modernMutation }) },
  { weight: 4, arbitrary: fc.record({ base: legacyBase, mutation: legacyMutation }) },
  { weight: 1, arbitrary: fc.record({ base: legacyInit, mutation: initMutation }) },
);

// ── rendering and the oracle ────────────────────────────────────────────────────────────────────────

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
