/**
 * The example upstream over real HTTP: framing, envelope and header rules, and every tool's life cycle
 * for clients that do and do not declare the tasks extension.
 */
import type { ExampleUpstream, ExampleUpstreamOptions } from '../../examples/upstream/server';
import { startExampleUpstream } from '../../examples/upstream/server';
import { META, PROTOCOL_VERSION, TASKS_EXTENSION, encodeHeaderValue, nameFieldFor } from '../../src/protocol';

type Json = Record<string, unknown>;

const TASK_CAPS = { elicitation: {}, extensions: { [TASKS_EXTENSION]: {} } };
const PLAIN_CAPS = { elicitation: {} };
const TASK_ID = /^upstream-task-[0-9a-f]{32}$/;

interface RpcOptions {
  caps?: Json;
  /** Replaces the generated `_meta` entirely; `null` sends no `_meta` at all. */
  meta?: Json | null;
  /** Overrides generated headers; a value of `null` removes the header. */
  headers?: Record<string, string | null>;
}

interface RpcResponse {
  status: number;
  contentType: string;
  headers: Headers;
  body: Json;
}

let nextId = 1;

async function post(url: string, body: unknown, headers: Record<string, string>): Promise<RpcResponse> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const contentType = res.headers.get('content-type') ?? '';
  const text = await res.text();
  let parsed: Json = {};
  if (contentType.includes('text/event-stream')) {
    const data = text
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trim());
    expect(data).toHaveLength(1);
    expect(text.startsWith('event: message\n')).toBe(true);
    parsed = JSON.parse(data[0] ?? '{}') as Json;
  } else if (text !== '') {
    parsed = JSON.parse(text) as Json;
  }
  return { status: res.status, contentType, headers: res.headers, body: parsed };
}

async function rpc(url: string, method: string, params: Json = {}, options: RpcOptions = {}) {
  const meta =
    options.meta === undefined
      ? {
          [META.protocolVersion]: PROTOCOL_VERSION,
          [META.clientCapabilities]: options.caps ?? TASK_CAPS,
          [META.clientInfo]: { name: 'upstream-test', version: '1.0.0' },
        }
      : options.meta;
  const fullParams = meta === null ? params : { ...params, _meta: meta };
  const headers: Record<string, string> = { 'mcp-protocol-version': PROTOCOL_VERSION, 'mcp-method': method };
  const field = nameFieldFor(method);
  const nameValue = field === undefined ? undefined : params[field];
  if (typeof nameValue === 'string') headers['mcp-name'] = encodeHeaderValue(nameValue);
  for (const [key, value] of Object.entries(options.headers ?? {})) {
    if (value === null) delete headers[key.toLowerCase()];
    else headers[key.toLowerCase()] = value;
  }
  const id = nextId++;
  const res = await post(url, { jsonrpc: '2.0', id, method, params: fullParams }, headers);
  if (res.body.id !== undefined) expect(res.body.id).toBe(id);
  return res;
}

function resultOf(res: RpcResponse): Json {
  if (res.body.error !== undefined) throw new Error(`unexpected error ${JSON.stringify(res.body.error)}`);
  expect(res.status).toBe(200);
  const result = res.body.result as Json;
  expect(typeof result.resultType).toBe('string');
  expect((result._meta as Json)[META.serverInfo]).toEqual({ name: 'test-upstream', version: '0.1.0' });
  return result;
}

function errorOf(res: RpcResponse): { code: number; message: string; data?: Json } {
  expect(res.body.result).toBeUndefined();
  return res.body.error as { code: number; message: string; data?: Json };
}

async function call(url: string, name: string, args: Json = {}, options: RpcOptions = {}, extra: Json = {}) {
  return rpc(url, 'tools/call', { name, arguments: args, ...extra }, options);
}

async function getTask(url: string, taskId: string): Promise<Json> {
  return resultOf(await rpc(url, 'tasks/get', { taskId }));
}

async function waitFor(url: string, taskId: string, statuses: string[], timeoutMs = 5000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const task = await getTask(url, taskId);
    if (statuses.includes(String(task.status))) return task;
    if (Date.now() > deadline) throw new Error(`task ${taskId} stuck in ${String(task.status)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function firstText(result: Json): string {
  const content = result.content as Array<{ text?: string }>;
  return content[0]?.text ?? '';
}

const BASE_OPTIONS: ExampleUpstreamOptions = {
  // Only the tasks fixtures: these tests pin the exact tool list and capabilities.
  conformanceFixtures: false,
  name: 'test-upstream',
  pollIntervalMs: 100,
  jobDurationMs: 50,
};

describe.each(['json', 'sse'] as const)('example upstream (%s responses)', (responseMode) => {
  let upstream: ExampleUpstream;
  let url: string;

  beforeAll(async () => {
    upstream = await startExampleUpstream({ ...BASE_OPTIONS, responseMode });
    url = upstream.url;
  });
  afterAll(async () => {
    await upstream.close();
  });
  beforeEach(() => upstream.resetStats());

  it('frames successful responses in the configured mode', async () => {
    const res = await rpc(url, 'server/discover');
    if (responseMode === 'sse') {
      expect(res.contentType).toBe('text/event-stream');
      expect(res.headers.get('x-accel-buffering')).toBe('no');
    } else {
      expect(res.contentType).toBe('application/json');
    }
    resultOf(res);
  });

  it('answers server/discover with versions, capabilities and cache hints', async () => {
    const result = resultOf(await rpc(url, 'server/discover'));
    expect(result).toMatchObject({
      resultType: 'complete',
      supportedVersions: ['2026-07-28'],
      capabilities: { tools: {}, extensions: { [TASKS_EXTENSION]: {} } },
      ttlMs: 60_000,
      cacheScope: 'public',
    });
    expect((result.capabilities as Json).tasks).toBeUndefined();
  });

  it('lists exactly the fixture tools with cache hints', async () => {
    const result = resultOf(await rpc(url, 'tools/list'));
    expect((result.tools as Json[]).map((tool) => tool.name)).toEqual([
      'greet',
      'slow_compute',
      'failing_job',
      'protocol_error_job',
      'confirm_delete',
      'multi_input',
      'test_tool_with_task',
    ]);
    expect(result).toMatchObject({ resultType: 'complete', ttlMs: 60_000, cacheScope: 'public' });
  });

  it('greets synchronously, even with a legacy task param', async () => {
    const result = resultOf(await call(url, 'greet', { name: 'World' }, {}, { task: { ttl: 60000 } }));
    expect(result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'Hello, World!' }],
    });
    expect(result.taskId).toBeUndefined();
    expect(firstText(resultOf(await call(url, 'greet')))).toBe('Hello, World!');
  });

  it('runs slow_compute as a task for declaring clients', async () => {
    const created = resultOf(await call(url, 'slow_compute', { seconds: 0.2, label: 'lc' }));
    expect(created).toMatchObject({
      resultType: 'task',
      status: 'working',
      ttlMs: 3_600_000,
      pollIntervalMs: 100,
    });
    expect(created.taskId).toMatch(TASK_ID);
    for (const key of ['task', 'result', 'error', 'inputRequests', 'requestState', 'ttl', 'pollInterval']) {
      expect(created).not.toHaveProperty(key);
    }
    expect(Date.parse(String(created.createdAt))).not.toBeNaN();
    const taskId = String(created.taskId);

    const working = await getTask(url, taskId);
    expect(working).toMatchObject({ resultType: 'complete', taskId, status: 'working' });
    expect(working).not.toHaveProperty('result');

    const done = await waitFor(url, taskId, ['completed']);
    expect(firstText(done.result as Json)).toBe('Computed lc in 0.2s');
    expect(done).not.toHaveProperty('requestState');
    expect(upstream.stats.taskIds).toEqual([taskId]);
    expect(upstream.stats.toolCalls).toEqual({ slow_compute: 1 });
    expect(upstream.stats.tasksGet).toBeGreaterThanOrEqual(2);
  });

  it('computes slow_compute synchronously for non-declaring clients', async () => {
    const started = Date.now();
    const result = resultOf(await call(url, 'slow_compute', { seconds: 0.1, label: 'sync' }, { caps: {} }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(result).toMatchObject({ resultType: 'complete' });
    expect(firstText(result)).toBe('Computed sync in 0.1s');
    expect(upstream.stats.taskIds).toEqual([]);
  });

  it('cancels a running task and acks cancel on terminal tasks idempotently', async () => {
    const taskId = String(resultOf(await call(url, 'slow_compute', { seconds: 60, label: 'c' })).taskId);
    const ack = resultOf(await rpc(url, 'tasks/cancel', { taskId }));
    expect(Object.keys(ack).sort()).toEqual(['_meta', 'resultType']);
    expect(ack.resultType).toBe('complete');
    expect(await getTask(url, taskId)).toMatchObject({ status: 'cancelled' });
    expect(resultOf(await rpc(url, 'tasks/cancel', { taskId })).resultType).toBe('complete');
    expect(await getTask(url, taskId)).toMatchObject({ status: 'cancelled' });
    expect(upstream.stats.tasksCancel).toBe(2);
  });

  it('completes failing_job with isError, and requires the extension', async () => {
    const taskId = String(resultOf(await call(url, 'failing_job')).taskId);
    const done = await waitFor(url, taskId, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    expect(done.result).toMatchObject({ isError: true });

    const res = await call(url, 'failing_job', {}, { caps: {} });
    expect(res.status).toBe(400);
    expect(errorOf(res)).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    });
  });

  it('fails protocol_error_job with an inlined JSON-RPC error', async () => {
    const taskId = String(resultOf(await call(url, 'protocol_error_job')).taskId);
    const done = await waitFor(url, taskId, ['completed', 'failed']);
    expect(done).toMatchObject({ resultType: 'complete', status: 'failed', error: { code: -32603 } });
    expect(typeof (done.error as Json).message).toBe('string');
    expect(typeof done.statusMessage).toBe('string');
    expect(done).not.toHaveProperty('result');

    expect(errorOf(await call(url, 'protocol_error_job', {}, { caps: {} })).code).toBe(-32603);
  });

  it('parks confirm_delete in input_required and completes after tasks/update', async () => {
    const created = resultOf(await call(url, 'confirm_delete', { filename: 'a.txt' }));
    expect(created.status).toBe('working');
    const taskId = String(created.taskId);
    const parked = await waitFor(url, taskId, ['input_required']);
    const requests = parked.inputRequests as Record<string, Json>;
    expect(Object.keys(requests)).toEqual(['confirm']);
    expect(requests.confirm).toMatchObject({
      method: 'elicitation/create',
      params: { mode: 'form', requestedSchema: { type: 'object', required: ['confirm'] } },
    });

    const ignored = resultOf(await rpc(url, 'tasks/update', { taskId, inputResponses: { nope: { x: 1 } } }));
    expect(Object.keys(ignored).sort()).toEqual(['_meta', 'resultType']);
    expect((await getTask(url, taskId)).status).toBe('input_required');

    const inputResponses = { confirm: { action: 'accept', content: { confirm: true } } };
    expect(resultOf(await rpc(url, 'tasks/update', { taskId, inputResponses })).resultType).toBe('complete');
    const done = await waitFor(url, taskId, ['completed']);
    expect(firstText(done.result as Json)).toBe('Confirmed: deleted a.txt');
    expect(done).not.toHaveProperty('inputRequests');
    // Answered keys are ignored from now on.
    resultOf(await rpc(url, 'tasks/update', { taskId, inputResponses }));
    expect(upstream.stats.tasksUpdate).toBe(3);
  });

  it('reports a declined confirmation', async () => {
    const taskId = String(resultOf(await call(url, 'confirm_delete', { filename: 'b.txt' })).taskId);
    await waitFor(url, taskId, ['input_required']);
    resultOf(await rpc(url, 'tasks/update', { taskId, inputResponses: { confirm: { action: 'decline' } } }));
    const done = await waitFor(url, taskId, ['completed']);
    expect(firstText(done.result as Json)).toBe('Declined: kept b.txt');
  });

  it('accepts partial answers to multi_input', async () => {
    const taskId = String(resultOf(await call(url, 'multi_input')).taskId);
    const parked = await waitFor(url, taskId, ['input_required']);
    expect(Object.keys(parked.inputRequests as Json)).toEqual(['first', 'second']);

    const first = { first: { action: 'accept', content: { name: 'A', confirm: true } } };
    resultOf(await rpc(url, 'tasks/update', { taskId, inputResponses: first }));
    const partial = await getTask(url, taskId);
    expect(partial.status).toBe('input_required');
    expect(Object.keys(partial.inputRequests as Json)).toEqual(['second']);

    const second = { second: { action: 'accept', content: { name: 'B' } } };
    resultOf(await rpc(url, 'tasks/update', { taskId, inputResponses: second }));
    const done = await waitFor(url, taskId, ['completed']);
    expect(firstText(done.result as Json)).toBe('Got A and B');
  });

  it('gathers user_name by MRTR, then runs test_tool_with_task as a task', async () => {
    const round1 = resultOf(await call(url, 'test_tool_with_task'));
    expect(round1.resultType).toBe('input_required');
    expect(round1).not.toHaveProperty('taskId');
    expect(Object.keys(round1.inputRequests as Json)).toEqual(['user_name']);

    const round2 = resultOf(
      await call(
        url,
        'test_tool_with_task',
        {},
        {},
        {
          inputResponses: { user_name: { action: 'accept', content: { name: 'Alice' } } },
          requestState: round1.requestState,
        },
      ),
    );
    expect(round2.resultType).toBe('task');
    expect(round2).not.toHaveProperty('requestState');
    expect(round2).not.toHaveProperty('inputRequests');
    const done = await waitFor(url, String(round2.taskId), ['completed']);
    expect(firstText(done.result as Json)).toContain('Alice');

    expect(errorOf(await call(url, 'test_tool_with_task', {}, { caps: PLAIN_CAPS })).code).toBe(-32021);
  });

  it('serves confirm_delete and multi_input by MRTR for non-declaring clients', async () => {
    const round1 = resultOf(await call(url, 'confirm_delete', { filename: 'c.txt' }, { caps: PLAIN_CAPS }));
    expect(round1.resultType).toBe('input_required');
    const confirm = { confirm: { action: 'accept', content: { confirm: true } } };
    const done = resultOf(
      await call(
        url,
        'confirm_delete',
        { filename: 'c.txt' },
        { caps: PLAIN_CAPS },
        { inputResponses: confirm },
      ),
    );
    expect(firstText(done)).toBe('Confirmed: deleted c.txt');

    // Answers may be spread over rounds; earlier ones travel in the signed requestState.
    const m1 = resultOf(await call(url, 'multi_input', {}, { caps: PLAIN_CAPS }));
    const m2 = resultOf(
      await call(
        url,
        'multi_input',
        {},
        { caps: PLAIN_CAPS },
        {
          inputResponses: { first: { action: 'accept', content: { name: 'X' } } },
          requestState: m1.requestState,
        },
      ),
    );
    expect(m2.resultType).toBe('input_required');
    expect(Object.keys(m2.inputRequests as Json)).toEqual(['second']);
    const m3 = resultOf(
      await call(
        url,
        'multi_input',
        {},
        { caps: PLAIN_CAPS },
        {
          inputResponses: { second: { action: 'accept', content: { name: 'Y' } } },
          requestState: m2.requestState,
        },
      ),
    );
    expect(firstText(m3)).toBe('Got X and Y');

    const tampered = await call(url, 'multi_input', {}, { caps: PLAIN_CAPS }, { requestState: 'e30.forged' });
    expect(errorOf(tampered).code).toBe(-32602);
    expect(errorOf(await call(url, 'confirm_delete', { filename: 'c.txt' }, { caps: {} })).code).toBe(-32021);
  });

  it('rejects mismatched or missing headers with -32020 and HTTP 400', async () => {
    const cases: Array<[string, Json, Record<string, string | null>]> = [
      ['tools/call', { name: 'greet', arguments: { name: 'x' } }, { 'mcp-method': 'tasks/get' }],
      ['tools/call', { name: 'greet', arguments: { name: 'x' } }, { 'mcp-name': 'slow_compute' }],
      ['tools/call', { name: 'greet', arguments: { name: 'x' } }, { 'mcp-name': null }],
      ['tools/list', {}, { 'mcp-method': null }],
      ['tools/list', {}, { 'mcp-protocol-version': null }],
      ['tools/list', {}, { 'mcp-protocol-version': '2025-11-25' }],
      ['tasks/get', { taskId: 'upstream-task-x' }, { 'mcp-name': 'other' }],
    ];
    for (const [method, params, headers] of cases) {
      const res = await rpc(url, method, params, { headers });
      expect(res.status).toBe(400);
      expect(errorOf(res).code).toBe(-32020);
    }
  });

  it('decodes base64 Mcp-Name values', async () => {
    const headers = { 'mcp-name': encodeHeaderValue(' greet') };
    expect(headers['mcp-name']).toMatch(/^=\?base64\?/);
    // ' greet' is not the tool name, so the decoded value must be compared (and mismatch).
    expect(errorOf(await call(url, 'greet', { name: 'x' }, { headers })).code).toBe(-32020);
    const ok = { 'mcp-name': `=?base64?${Buffer.from('greet').toString('base64')}?=` };
    expect(resultOf(await call(url, 'greet', { name: 'x' }, { headers: ok })).resultType).toBe('complete');
  });

  it('validates the _meta envelope and the protocol version', async () => {
    for (const meta of [
      null,
      { [META.clientCapabilities]: {} },
      { [META.protocolVersion]: PROTOCOL_VERSION },
    ]) {
      const res = await rpc(url, 'server/discover', {}, { meta });
      expect(res.status).toBe(400);
      expect(errorOf(res).code).toBe(-32602);
    }
    const res = await rpc(
      url,
      'server/discover',
      {},
      {
        meta: { [META.protocolVersion]: '1900-01-01', [META.clientCapabilities]: {} },
        headers: { 'mcp-protocol-version': '1900-01-01' },
      },
    );
    expect(res.status).toBe(400);
    expect(errorOf(res)).toMatchObject({
      code: -32022,
      data: { supported: ['2026-07-28'], requested: '1900-01-01' },
    });
    // A supported header with an unsupported body version is a header/body mismatch, not -32022.
    const mismatch = await rpc(
      url,
      'server/discover',
      {},
      { meta: { [META.protocolVersion]: 'v999.0.0', [META.clientCapabilities]: {} } },
    );
    expect(mismatch.status).toBe(400);
    expect(errorOf(mismatch).code).toBe(-32020);
  });

  it('answers unknown and removed methods with -32601 and HTTP 404', async () => {
    for (const method of ['tasks/result', 'tasks/list', 'initialize', 'ping', 'no/such']) {
      const res = await rpc(url, method, { taskId: 'x' });
      expect(res.status).toBe(404);
      expect(errorOf(res).code).toBe(-32601);
    }
  });

  it('gates tasks/* on the extension and rejects unknown task ids', async () => {
    for (const [method, params] of [
      ['tasks/get', { taskId: 'gate-test' }],
      ['tasks/update', { taskId: 'gate-test', inputResponses: {} }],
      ['tasks/cancel', { taskId: 'gate-test' }],
    ] as const) {
      const res = await rpc(url, method, params, { caps: {} });
      expect(res.status).toBe(400);
      expect(errorOf(res)).toMatchObject({
        code: -32021,
        data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      });
      expect(errorOf(await rpc(url, method, params)).code).toBe(-32602);
    }
    expect(errorOf(await call(url, 'no_such_tool')).code).toBe(-32602);
    expect(errorOf(await call(url, 'greet', { name: 7 })).code).toBe(-32602);
  });

  it('handles non-POST, notifications and malformed bodies', async () => {
    for (const method of ['GET', 'DELETE']) {
      expect((await fetch(url, { method })).status).toBe(405);
    }
    const note = await post(url, { jsonrpc: '2.0', method: 'notifications/anything' }, {});
    expect(note.status).toBe(202);
    const parse = await post(url, '{nope', {});
    expect(parse.status).toBe(400);
    expect(errorOf(parse).code).toBe(-32700);
    const invalid = await post(url, { jsonrpc: '2.0', id: 9, method: 'tools/list', extra: 1 }, {});
    expect(invalid.status).toBe(400);
    expect(invalid.body).toMatchObject({ id: 9, error: { code: -32600 } });
  });

  it('records the headers and _meta of the last request', async () => {
    await rpc(url, 'tools/call', { name: 'greet', arguments: { name: 'h' } });
    expect(upstream.stats.lastHeaders).toMatchObject({ 'mcp-method': 'tools/call', 'mcp-name': 'greet' });
    expect(upstream.stats.lastMeta?.[META.protocolVersion]).toBe(PROTOCOL_VERSION);
    expect(upstream.stats.requests).toEqual({ 'tools/call': 1 });
  });
});

describe('example upstream options', () => {
  it('can stop advertising the tasks extension at runtime', async () => {
    const upstream = await startExampleUpstream({ ...BASE_OPTIONS, advertiseTasks: false, discoverTtlMs: 5 });
    try {
      const before = resultOf(await rpc(upstream.url, 'server/discover'));
      expect(before.capabilities).toEqual({ tools: {} });
      expect(before.ttlMs).toBe(5);
      upstream.setAdvertiseTasks(true);
      const after = resultOf(await rpc(upstream.url, 'server/discover'));
      expect(after.capabilities).toEqual({ tools: {}, extensions: { [TASKS_EXTENSION]: {} } });
    } finally {
      await upstream.close();
    }
  });

  it('forgets tasks after their ttlMs', async () => {
    const upstream = await startExampleUpstream({ ...BASE_OPTIONS, ttlMs: 150 });
    try {
      const created = resultOf(await call(upstream.url, 'slow_compute', { seconds: 0, label: 't' }));
      expect(created.ttlMs).toBe(150);
      const taskId = String(created.taskId);
      await waitFor(upstream.url, taskId, ['completed']);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(errorOf(await rpc(upstream.url, 'tasks/get', { taskId })).code).toBe(-32602);
    } finally {
      await upstream.close();
    }
  });

  it('closes promptly with tasks and synchronous calls in flight', async () => {
    const upstream = await startExampleUpstream(BASE_OPTIONS);
    resultOf(await call(upstream.url, 'slow_compute', { seconds: 60, label: 'bg' }));
    const pending = call(upstream.url, 'slow_compute', { seconds: 60, label: 'fg' }, { caps: {} }).catch(
      (err: unknown) => err,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    await upstream.close();
    expect(Date.now() - started).toBeLessThan(1000);
    // fetch fails (its TypeError comes from another realm under jest, so no instanceof check).
    expect(await pending).toHaveProperty('message', 'fetch failed');
  });

  it('mints distinct, unguessable task ids', async () => {
    const upstream = await startExampleUpstream(BASE_OPTIONS);
    try {
      for (let i = 0; i < 5; i++) await call(upstream.url, 'slow_compute', { seconds: 60, label: `${i}` });
      const ids = upstream.stats.taskIds;
      expect(new Set(ids).size).toBe(5);
      for (const id of ids) expect(id).toMatch(TASK_ID);
    } finally {
      await upstream.close();
    }
  });
});
