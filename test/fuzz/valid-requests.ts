/**
 * The valid requests of the hostile-input test (see requests.ts): every 2026 method the gateway serves
 * with valid params, headers and `_meta`, the 2025-era session requests and the 2025-era `initialize`,
 * each as a `Base` that a mutation then breaks (or leaves valid).
 */
import fc from 'fast-check';
import {
  LogLevelSchema,
  META,
  PROTOCOL_VERSION,
  TASKS_EXTENSION,
  encodeHeaderValue,
} from '../../src/protocol';
import type { Base } from './requests';

export const printable = fc.string({
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

export const modernBase: fc.Arbitrary<Base> = fc
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

export const legacyBase: fc.Arbitrary<Base> = fc
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
export const legacyInit: fc.Arbitrary<Base> = fc
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
