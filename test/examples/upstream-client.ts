/**
 * What the tests of the example upstream over real HTTP (upstream-*.test.ts) share: a JSON-RPC client
 * that checks the framing of every answer (one SSE event or one JSON body) and the envelope of every
 * result, helpers for tools and tasks, and the upstream started once per response mode.
 */
import type { ExampleUpstream, ExampleUpstreamOptions } from '../../examples/upstream/server';
import { startExampleUpstream } from '../../examples/upstream/server';
import { META, PROTOCOL_VERSION, TASKS_EXTENSION, encodeHeaderValue, nameFieldFor } from '../../src/protocol';

export type Json = Record<string, unknown>;

const TASK_CAPS = { elicitation: {}, extensions: { [TASKS_EXTENSION]: {} } };
export const PLAIN_CAPS = { elicitation: {} };
export const TASK_ID = /^upstream-task-[0-9a-f]{32}$/;

export interface RpcOptions {
  caps?: Json;
  /** Replaces the generated `_meta` entirely; `null` sends no `_meta` at all. */
  meta?: Json | null;
  /** Overrides generated headers; a value of `null` removes the header. */
  headers?: Record<string, string | null>;
}

export interface RpcResponse {
  status: number;
  contentType: string;
  headers: Headers;
  body: Json;
}

let nextId = 1;

export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<RpcResponse> {
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

export async function rpc(url: string, method: string, params: Json = {}, options: RpcOptions = {}) {
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

export function resultOf(res: RpcResponse): Json {
  if (res.body.error !== undefined) throw new Error(`unexpected error ${JSON.stringify(res.body.error)}`);
  expect(res.status).toBe(200);
  const result = res.body.result as Json;
  expect(typeof result.resultType).toBe('string');
  expect((result._meta as Json)[META.serverInfo]).toEqual({ name: 'test-upstream', version: '0.1.0' });
  return result;
}

export function errorOf(res: RpcResponse): { code: number; message: string; data?: Json } {
  expect(res.body.result).toBeUndefined();
  return res.body.error as { code: number; message: string; data?: Json };
}

export async function call(
  url: string,
  name: string,
  args: Json = {},
  options: RpcOptions = {},
  extra: Json = {},
) {
  return rpc(url, 'tools/call', { name, arguments: args, ...extra }, options);
}

export async function getTask(url: string, taskId: string): Promise<Json> {
  return resultOf(await rpc(url, 'tasks/get', { taskId }));
}

export async function waitFor(
  url: string,
  taskId: string,
  statuses: string[],
  timeoutMs = 5000,
): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const task = await getTask(url, taskId);
    if (statuses.includes(String(task.status))) return task;
    if (Date.now() > deadline) throw new Error(`task ${taskId} stuck in ${String(task.status)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export function firstText(result: Json): string {
  const content = result.content as Array<{ text?: string }>;
  return content[0]?.text ?? '';
}

export const BASE_OPTIONS: ExampleUpstreamOptions = {
  // Only the tasks fixtures: these tests pin the exact tool list and capabilities.
  conformanceFixtures: false,
  name: 'test-upstream',
  pollIntervalMs: 100,
  jobDurationMs: 50,
};

/**
 * Starts the example upstream (tasks fixtures only) answering in `responseMode` before the tests of the
 * enclosing describe, closes it after them, and resets its counters before each test.
 */
export function upstreamFixture(responseMode: 'json' | 'sse'): {
  readonly upstream: ExampleUpstream;
  readonly url: string;
} {
  let started: ExampleUpstream | undefined;
  const fixture = {
    get upstream(): ExampleUpstream {
      if (!started) throw new Error('the upstream starts in beforeAll');
      return started;
    },
    get url(): string {
      return fixture.upstream.url;
    },
  };
  beforeAll(async () => {
    started = await startExampleUpstream({ ...BASE_OPTIONS, responseMode });
  });
  afterAll(async () => {
    await started?.close();
  });
  beforeEach(() => fixture.upstream.resetStats());
  return fixture;
}
