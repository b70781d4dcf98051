import type { z } from 'zod';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  DetailedTaskSchema,
  DiscoverResultSchema,
  GetTaskResultSchema,
  JsonRpcClientMessageSchema,
  JsonRpcErrorResponseSchema,
  JsonRpcNotificationSchema,
  JsonRpcRequestSchema,
  JsonRpcResponseSchema,
  JsonRpcResultResponseSchema,
  META,
  PROTOCOL_VERSION,
  RequestMetaSchema,
  TaskFieldsSchema,
  UpdateTaskParamsSchema,
} from '../../src/protocol';

/** The wire text → schema → wire text path every relayed message takes. */
function roundTrip(schema: z.ZodType, json: string): string {
  return JSON.stringify(schema.parse(JSON.parse(json)));
}

const requestMeta = {
  [META.protocolVersion]: PROTOCOL_VERSION,
  [META.clientCapabilities]: {},
};

const taskFields = {
  taskId: 'task-1',
  status: 'working',
  createdAt: '2026-07-28T10:30:00Z',
  lastUpdatedAt: '2026-07-28T10:30:00Z',
  ttlMs: 3_600_000,
};

describe('byte-for-byte round trip of unknown keys and extension fields', () => {
  // Inputs list the schema's declared keys first, in declaration order, so only the preservation of
  // unknown keys and values is under test here; key order of real wire input is tested further below.
  it('CallToolResult keeps unknown _meta keys, unknown result fields and unknown content fields', () => {
    const json = JSON.stringify({
      resultType: 'complete',
      _meta: {
        [META.serverInfo]: { name: 'up', version: '1', 'x-build': 7 },
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
        'com.example/x': { nested: [1, 'two', null, { deep: true }] },
        'io.modelcontextprotocol/futureKey': 'unknown reserved key',
      },
      content: [
        { type: 'text', text: 'hi', annotations: { audience: ['user'] }, 'com.example/tag': 1 },
        { type: 'com.example/hologram', payload: { a: 1 } },
      ],
      structuredContent: [1, { b: 2 }],
      isError: false,
      'com.example/extension': { enabled: true },
      futureField: 42,
    });
    expect(roundTrip(CallToolResultSchema, json)).toBe(json);
  });

  it('DiscoverResult keeps unknown capabilities, extension settings and result fields', () => {
    const json = JSON.stringify({
      resultType: 'complete',
      _meta: { [META.serverInfo]: { name: 'up', version: '1' }, 'com.example/region': 'eu' },
      supportedVersions: ['2026-07-28', '2099-01-01'],
      capabilities: {
        tools: { listChanged: true, 'com.example/flag': 1 },
        extensions: { 'io.modelcontextprotocol/tasks': {}, 'com.example/ext': { setting: 'on' } },
        'com.example/capability': { x: 1 },
      },
      instructions: 'use tools',
      ttlMs: 3_600_000,
      cacheScope: 'public',
      'com.example/extra': [true],
    });
    expect(roundTrip(DiscoverResultSchema, json)).toBe(json);
  });

  it('CreateTaskResult keeps unknown _meta keys and extension fields', () => {
    const json = JSON.stringify({
      resultType: 'task',
      _meta: { 'com.example/trace': 'abc', baggage: 'k=v' },
      taskId: 'task-1',
      status: 'working',
      statusMessage: 'started',
      createdAt: '2026-07-28T10:30:00Z',
      lastUpdatedAt: '2026-07-28T10:30:00Z',
      ttlMs: null,
      pollIntervalMs: 5000,
      'com.example/priority': 'high',
    });
    expect(roundTrip(CreateTaskResultSchema, json)).toBe(json);
  });

  const details: Record<string, Record<string, unknown>> = {
    working: {},
    input_required: {
      inputRequests: {
        login: {
          method: 'elicitation/create',
          params: { mode: 'form', message: 'GitHub user?', requestedSchema: { type: 'object' } },
          'com.example/hint': 1,
        },
      },
    },
    completed: {
      result: {
        resultType: 'complete',
        content: [{ type: 'text', text: 'Hello, Luca!' }],
        isError: true,
        _meta: { 'com.example/cost': 3 },
        'com.example/inner': { kept: true },
      },
    },
    failed: {
      error: { code: -32603, message: 'API rate limit exceeded', data: { retryAfter: 30 }, extra: 'x' },
    },
    cancelled: {},
  };

  it.each(Object.keys(details))('tasks/get result with status %s keeps unknown keys', (status) => {
    const json = JSON.stringify({
      resultType: 'complete',
      _meta: { 'com.example/x': { y: [1, 2] }, tracestate: 'a=b' },
      ...taskFields,
      status,
      statusMessage: `now ${status}`,
      pollIntervalMs: 1000,
      ...details[status],
      'com.example/ext': { any: ['json', 1, null] },
    });
    const parsed = GetTaskResultSchema.parse(JSON.parse(json));
    expect(parsed.status).toBe(status);
    expect(JSON.stringify(parsed)).toBe(json);
  });

  it('request params keep unknown _meta keys and extension params', () => {
    const json = JSON.stringify({
      jsonrpc: '2.0',
      id: 'r1',
      method: 'tools/call',
      params: {
        name: 'echo',
        arguments: { text: 'x' },
        _meta: { ...requestMeta, progressToken: 7, 'com.example/x': { a: 1 } },
        'com.example/param': true,
      },
    });
    expect(roundTrip(JsonRpcRequestSchema, json)).toBe(json);
    expect(roundTrip(JsonRpcClientMessageSchema, json)).toBe(json);
  });

  it('relayed responses keep the result and the error data unchanged', () => {
    const result = JSON.stringify({
      jsonrpc: '2.0',
      id: 3,
      result: { z: 1, resultType: 'complete', _meta: { 'com.example/x': 1 }, a: [2] },
    });
    const error = JSON.stringify({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32602, message: 'bad', data: { detail: [1] }, 'com.example/x': 1 },
    });
    expect(roundTrip(JsonRpcResponseSchema, result)).toBe(result);
    expect(roundTrip(JsonRpcResponseSchema, error)).toBe(error);
  });
});

describe('real wire input survives a round trip in any key order', () => {
  // zod emits declared keys first; JSON object key order carries no meaning, so equality here is
  // structural: every key and value the sender wrote comes back, wherever it stood.
  it.each([
    [
      // The server/discover example of the 2026-07-28 spec: `_meta` comes last.
      'server/discover example from the spec',
      DiscoverResultSchema,
      '{"resultType":"complete","supportedVersions":["2026-07-28"],' +
        '"capabilities":{"tools":{"listChanged":true},"extensions":{"io.modelcontextprotocol/tasks":{}}},' +
        '"instructions":"optional LLM guidance","ttlMs":3600000,"cacheScope":"public",' +
        '"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"my-router","version":"0.1.0"}}}',
    ],
    [
      'CallToolResult with _meta and an extension field before content',
      CallToolResultSchema,
      '{"com.example/ext":1,"_meta":{"com.example/x":1},"content":[{"text":"hi","type":"text"}],"resultType":"complete"}',
    ],
    [
      'CreateTaskResult example from the Tasks spec',
      CreateTaskResultSchema,
      '{"resultType":"task","taskId":"786512e2","status":"working","statusMessage":"started",' +
        '"createdAt":"2026-07-28T10:30:00Z","lastUpdatedAt":"2026-07-28T10:30:00Z","ttlMs":3600000,"pollIntervalMs":5000}',
    ],
    [
      'CreateTaskResult with _meta after the task fields',
      CreateTaskResultSchema,
      '{"resultType":"task","taskId":"t","status":"working","createdAt":"c","lastUpdatedAt":"l","ttlMs":null,' +
        '"_meta":{"com.example/x":1}}',
    ],
    [
      'failed tasks/get example from the Tasks spec',
      GetTaskResultSchema,
      '{"resultType":"complete","taskId":"786512e2","status":"failed","createdAt":"c","lastUpdatedAt":"l",' +
        '"ttlMs":3600000,"statusMessage":"Tool execution failed: rate limit",' +
        '"error":{"code":-32603,"message":"API rate limit exceeded"}}',
    ],
    [
      'tasks/get result with _meta last',
      GetTaskResultSchema,
      '{"resultType":"complete","taskId":"t","status":"working","createdAt":"c","lastUpdatedAt":"l","ttlMs":1,' +
        '"_meta":{"com.example/x":1}}',
    ],
  ] as const)('%s', (_name, schema, json) => {
    expect(JSON.parse(roundTrip(schema, json))).toEqual(JSON.parse(json));
  });
});

describe('JSON-RPC frames are strict', () => {
  const request = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: requestMeta } };

  it('accepts a well-formed request with a string or integer id', () => {
    expect(JsonRpcRequestSchema.safeParse(request).success).toBe(true);
    expect(JsonRpcRequestSchema.safeParse({ ...request, id: 'abc' }).success).toBe(true);
  });

  it('rejects an extra top-level key on a request, also through the client-message union', () => {
    const extra = { ...request, sessionId: 'x' };
    const r = JsonRpcRequestSchema.safeParse(extra);
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.code).toBe('unrecognized_keys');
    expect(JsonRpcClientMessageSchema.safeParse(extra).success).toBe(false);
  });

  it('rejects an extra top-level key on a notification and on responses', () => {
    expect(JsonRpcNotificationSchema.safeParse({ jsonrpc: '2.0', method: 'n', extra: 1 }).success).toBe(
      false,
    );
    expect(
      JsonRpcResultResponseSchema.safeParse({ jsonrpc: '2.0', id: 1, result: {}, extra: 1 }).success,
    ).toBe(false);
    expect(
      JsonRpcErrorResponseSchema.safeParse({ jsonrpc: '2.0', id: 1, error: { code: 1, message: 'm' }, x: 1 })
        .success,
    ).toBe(false);
  });

  it('rejects a wrong version, a fractional or null request id and an empty method', () => {
    expect(JsonRpcRequestSchema.safeParse({ ...request, jsonrpc: '1.0' }).success).toBe(false);
    expect(JsonRpcRequestSchema.safeParse({ ...request, id: 1.5 }).success).toBe(false);
    expect(JsonRpcRequestSchema.safeParse({ ...request, id: null }).success).toBe(false);
    expect(JsonRpcRequestSchema.safeParse({ ...request, method: '' }).success).toBe(false);
  });

  it('rejects a response carrying both result and error', () => {
    expect(
      JsonRpcResponseSchema.safeParse({ jsonrpc: '2.0', id: 1, result: {}, error: { code: 1, message: 'm' } })
        .success,
    ).toBe(false);
  });

  it('tells a notification from a request by the id', () => {
    const n = JsonRpcClientMessageSchema.parse({ jsonrpc: '2.0', method: 'notifications/x' });
    expect('id' in n).toBe(false);
    const r = JsonRpcClientMessageSchema.parse(request);
    expect('id' in r && r.id).toBe(1);
  });
});

describe('RequestMetaSchema', () => {
  it('accepts the two required keys, with empty capabilities, and keeps other keys', () => {
    const meta = { ...requestMeta, traceparent: 't', 'com.example/x': { a: 1 } };
    expect(RequestMetaSchema.parse(meta)).toEqual(meta);
  });

  it.each([META.protocolVersion, META.clientCapabilities])('rejects _meta without %s', (key) => {
    const meta: Record<string, unknown> = { ...requestMeta };
    delete meta[key];
    const r = RequestMetaSchema.safeParse(meta);
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.path[0])).toEqual([key]);
  });

  it('rejects a non-string version and non-object capabilities', () => {
    expect(RequestMetaSchema.safeParse({ ...requestMeta, [META.protocolVersion]: 20260728 }).success).toBe(
      false,
    );
    expect(RequestMetaSchema.safeParse({ ...requestMeta, [META.clientCapabilities]: null }).success).toBe(
      false,
    );
  });

  it('accepts a missing clientInfo but rejects one without name and version', () => {
    expect(
      RequestMetaSchema.safeParse({ ...requestMeta, [META.clientInfo]: { name: 'c', version: '1' } }).success,
    ).toBe(true);
    expect(RequestMetaSchema.safeParse({ ...requestMeta, [META.clientInfo]: { name: 'c' } }).success).toBe(
      false,
    );
  });
});

describe('task schemas', () => {
  it('ttlMs is required and nullable', () => {
    expect(TaskFieldsSchema.parse({ ...taskFields, ttlMs: null }).ttlMs).toBeNull();
    expect(TaskFieldsSchema.parse(taskFields).ttlMs).toBe(3_600_000);
    const { ttlMs: _ttl, ...withoutTtl } = taskFields;
    expect(TaskFieldsSchema.safeParse(withoutTtl).success).toBe(false);
    expect(TaskFieldsSchema.safeParse({ ...taskFields, ttlMs: -1 }).success).toBe(false);
    expect(TaskFieldsSchema.safeParse({ ...taskFields, ttlMs: 1.5 }).success).toBe(false);
  });

  it('CreateTaskResult requires resultType "task"; tasks/get requires "complete"', () => {
    expect(CreateTaskResultSchema.safeParse({ ...taskFields, resultType: 'task', ttlMs: null }).success).toBe(
      true,
    );
    expect(CreateTaskResultSchema.safeParse({ ...taskFields, resultType: 'complete' }).success).toBe(false);
    expect(GetTaskResultSchema.safeParse({ ...taskFields, resultType: 'complete' }).success).toBe(true);
    expect(GetTaskResultSchema.safeParse({ ...taskFields, resultType: 'task' }).success).toBe(false);
  });

  it('rejects an unknown status', () => {
    expect(TaskFieldsSchema.safeParse({ ...taskFields, status: 'running' }).success).toBe(false);
    expect(DetailedTaskSchema.safeParse({ ...taskFields, status: 'running' }).success).toBe(false);
  });

  describe('DetailedTask discriminates by status', () => {
    it('input_required requires inputRequests', () => {
      const t = { ...taskFields, status: 'input_required' };
      expect(DetailedTaskSchema.safeParse(t).success).toBe(false);
      const parsed = DetailedTaskSchema.parse({
        ...t,
        inputRequests: { a: { method: 'elicitation/create' } },
      });
      expect(parsed.status === 'input_required' && Object.keys(parsed.inputRequests)).toEqual(['a']);
    });

    it('completed requires an object result', () => {
      const t = { ...taskFields, status: 'completed' };
      expect(DetailedTaskSchema.safeParse(t).success).toBe(false);
      expect(DetailedTaskSchema.safeParse({ ...t, result: 'done' }).success).toBe(false);
      const parsed = DetailedTaskSchema.parse({ ...t, result: { content: [], isError: true } });
      expect(parsed.status === 'completed' && parsed.result).toEqual({ content: [], isError: true });
    });

    it('failed requires a JSON-RPC error object', () => {
      const t = { ...taskFields, status: 'failed' };
      expect(DetailedTaskSchema.safeParse(t).success).toBe(false);
      expect(DetailedTaskSchema.safeParse({ ...t, error: { message: 'no code' } }).success).toBe(false);
      expect(DetailedTaskSchema.safeParse({ ...t, error: { code: 1.5, message: 'm' } }).success).toBe(false);
      const parsed = DetailedTaskSchema.parse({ ...t, error: { code: -32603, message: 'boom' } });
      expect(parsed.status === 'failed' && parsed.error.code).toBe(-32603);
    });

    it('working and cancelled need no detail', () => {
      expect(DetailedTaskSchema.safeParse(taskFields).success).toBe(true);
      expect(DetailedTaskSchema.safeParse({ ...taskFields, status: 'cancelled' }).success).toBe(true);
    });

    it('the detail of one status does not satisfy another', () => {
      expect(
        DetailedTaskSchema.safeParse({ ...taskFields, status: 'failed', result: { content: [] } }).success,
      ).toBe(false);
      expect(
        DetailedTaskSchema.safeParse({ ...taskFields, status: 'completed', error: { code: 1, message: 'm' } })
          .success,
      ).toBe(false);
    });
  });

  describe('UpdateTaskParamsSchema', () => {
    const base = { _meta: requestMeta, taskId: 'task-1' };

    it('drops non-object input responses and keeps the valid ones unchanged', () => {
      const parsed = UpdateTaskParamsSchema.parse({
        ...base,
        inputResponses: {
          ok: { action: 'accept', content: { name: 'Luca' }, 'com.example/x': 1 },
          declined: { action: 'decline' },
          str: 'accept',
          nul: null,
          arr: [{ action: 'accept' }],
          num: 5,
        },
      });
      expect(parsed.inputResponses).toEqual({
        ok: { action: 'accept', content: { name: 'Luca' }, 'com.example/x': 1 },
        declined: { action: 'decline' },
      });
      expect(parsed.taskId).toBe('task-1');
    });

    it('accepts an update whose responses are all dropped', () => {
      expect(UpdateTaskParamsSchema.parse({ ...base, inputResponses: { a: 1 } }).inputResponses).toEqual({});
    });

    it('still requires taskId, inputResponses as an object and the request _meta', () => {
      expect(UpdateTaskParamsSchema.safeParse({ ...base, inputResponses: [] }).success).toBe(false);
      expect(UpdateTaskParamsSchema.safeParse({ _meta: requestMeta, inputResponses: {} }).success).toBe(
        false,
      );
      expect(UpdateTaskParamsSchema.safeParse({ taskId: 't', inputResponses: {} }).success).toBe(false);
    });
  });
});
