/**
 * 2025-era clients on the gateway's endpoint, with the official SDKs as they are used today: the SDK 1.x
 * `Client` (the base of most MCP clients) and the SDK 2.x `Client` in its default (legacy) mode and in
 * `auto` mode. Real HTTP, a real Temporal dev server and the example upstream behind the gateway.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as Client2, StreamableHTTPClientTransport as Transport2 } from '@modelcontextprotocol/client';
import type { Runtime } from '../../src/main/runtime';
import { SessionTokens } from '../../src/api/mcp/legacy/session';
import { Cipher } from '../../src/store/cipher';
import type { TestGateway } from '../helpers/gateway';
import { streamToolCall } from '../helpers/sdk1-tasks';
import { startTestGateway, startApiReplica } from '../helpers/gateway';

let gw: TestGateway;
/** A second API replica on the same store and keys: any replica must serve any session. */
let replica: Runtime;
beforeAll(async () => {
  gw = await startTestGateway({
    projects: (url) => [{ slug: 'other', namespacing: false, upstreams: [{ alias: 'example', url }] }],
  });
  replica = await startApiReplica(gw);
});
afterAll(async () => {
  await replica?.close();
  await gw?.close();
});

/** A fetch that sends each request to the next replica in turn (no stickiness). */
function alternating(): typeof fetch {
  const bases = [new URL(gw.client.url).origin, String(replica.url)];
  let next = 0;
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const base = bases[next++ % bases.length] as string;
    return fetch(new URL(url.pathname + url.search, base), init);
  };
}

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** `initialize` by hand; returns the session id. */
async function initialize(url = gw.client.url, version = '2025-11-25'): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: HEADERS,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
}

async function post(sessionId: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(gw.client.url, {
    method: 'POST',
    headers: { ...HEADERS, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25', ...headers },
    body: JSON.stringify(body),
  });
}

const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

const TASK_CAPABILITIES = { tasks: { list: {}, cancel: {}, requests: { elicitation: { create: {} } } } };

async function sdk1(capabilities: Record<string, unknown> = {}, fetchFn?: typeof fetch) {
  const client = new Client({ name: 'sdk1-test', version: '1.0.0' }, { capabilities });
  const transport = new StreamableHTTPClientTransport(new URL(gw.client.url), {
    ...(fetchFn && { fetch: fetchFn }),
  });
  await client.connect(transport);
  return { client, transport };
}

function text(result: unknown): string {
  const content = (result as CallToolResult).content[0];
  return content?.type === 'text' ? content.text : '';
}

describe('SDK 1.x client', () => {
  test('connects, lists and calls an ordinary tool; the session ends with DELETE', async () => {
    const { client, transport } = await sdk1();
    expect(client.getServerVersion()?.name).toBe('taskrouter');
    expect(transport.sessionId).toMatch(/^mcs1\./);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['greet', 'slow_compute']));
    expect((await client.listResources()).resources.length).toBeGreaterThan(0);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toContain('test_simple_prompt');
    expect(text(await client.callTool({ name: 'greet', arguments: { name: 'Ada' } }))).toContain('Ada');
    await client.ping();
    await client.setLoggingLevel('warning');
    const sessionId = String(transport.sessionId);
    await transport.terminateSession();
    // The ended session is gone on every replica: the same id now gets 404.
    const res = await fetch(gw.client.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionId,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(res.status).toBe(404);
    await client.close();
  });

  test('a tool the upstream runs only as a task answers inline with its final result', async () => {
    const { client } = await sdk1();
    const result = await client.callTool({ name: 'failing_job', arguments: {} });
    expect(result.isError).toBe(true);
    await client.close();
  });

  test('2025-11-25 tasks: create, poll, result; input answered through the elicitation handler', async () => {
    const { client } = await sdk1({ elicitation: { form: {} }, ...TASK_CAPABILITIES });
    client.setRequestHandler(ElicitRequestSchema, async () => ({
      action: 'accept',
      content: { confirm: true },
    }));
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === 'slow_compute')?.execution?.taskSupport).toBe('optional');

    const {
      types: seen,
      taskId,
      result: final,
    } = await streamToolCall(client, 'slow_compute', { seconds: 0.3 });
    expect(seen[0]).toBe('taskCreated');
    expect(text(final)).toContain('slow_compute');
    // tasks/list shows the caller's own tasks, with the same ids and the era's task shape.
    const listed = await client.experimental.tasks.listTasks();
    expect(listed.tasks.find((t) => t.taskId === taskId)).toMatchObject({ status: 'completed' });
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('completed');

    const confirmed = await streamToolCall(client, 'confirm_delete', { filename: 'a.txt' });
    expect(text(confirmed.result)).toMatch(/deleted/i);
    await client.close();
  });
});

describe('SDK 1.x client, a 2025-11-25 task the upstream answered at once', () => {
  test("tasks/result carries the gateway's serverInfo, not the upstream's", async () => {
    const { client } = await sdk1(TASK_CAPABILITIES);
    await client.listTools();
    const { created, result: final } = await streamToolCall(
      client,
      'greet',
      { name: 'Vera' },
      { task: { ttl: 60_000 } },
    );
    expect(created).toBe('completed');
    expect(text(final)).toContain('Vera');
    expect(final?._meta?.[SERVER_INFO]).toMatchObject({ name: 'taskrouter' });
    expect(JSON.stringify(final)).not.toContain('example-upstream');
    await client.close();
  });
});

describe('SDK 1.x client, two API replicas, requests alternating between them', () => {
  test('ordinary and task-only tools, and 2025-11-25 tasks with input', async () => {
    const { client } = await sdk1({ elicitation: { form: {} }, ...TASK_CAPABILITIES }, alternating());
    client.setRequestHandler(ElicitRequestSchema, async () => ({
      action: 'accept',
      content: { confirm: true },
    }));
    await client.listTools();
    expect(text(await client.callTool({ name: 'greet', arguments: { name: 'Cy' } }))).toContain('Cy');
    expect((await client.callTool({ name: 'failing_job', arguments: {} })).isError).toBe(true);
    const confirmed = await streamToolCall(client, 'confirm_delete', { filename: 'b.txt' });
    expect(text(confirmed.result)).toMatch(/deleted/i);
    await client.close();
  });
});

describe('SDK 2.x client', () => {
  test.each([
    ['default (legacy)', undefined, false],
    ['auto', { mode: 'auto' as const }, false],
    ['default (legacy), alternating replicas', undefined, true],
    ['auto, alternating replicas', { mode: 'auto' as const }, true],
  ])(
    '%s: connects, lists and calls an ordinary and a task-only tool',
    async (_name, versionNegotiation, alternate) => {
      const client = new Client2(
        { name: 'sdk2-test', version: '2.0.0' },
        versionNegotiation ? { versionNegotiation } : {},
      );
      await client.connect(
        new Transport2(new URL(gw.client.url), alternate ? { fetch: alternating() } : undefined),
      );
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('greet');
      const greeting = await client.callTool({ name: 'greet', arguments: { name: 'Bo' } });
      expect(text(greeting)).toContain('Bo');
      const job = await client.callTool({ name: 'failing_job', arguments: {} });
      expect(job.isError).toBe(true);
      await client.close();
    },
  );
});

describe('a lost response stream', () => {
  test('resumes on the other replica with Last-Event-ID and gets the final answer', async () => {
    const session = String((await initialize()).headers.get('mcp-session-id'));
    const controller = new AbortController();
    const res = await post(
      session,
      { jsonrpc: '2.0', id: 42, method: 'tools/call', params: { name: 'failing_job', arguments: {} } },
      {},
    );
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    // Read until the first event id (the priming event), then drop the stream.
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let seen = '';
    while (!/^id: (\S+)$/m.test(seen)) seen += new TextDecoder().decode((await reader.read()).value);
    const lastEventId = (/^id: (\S+)$/m.exec(seen) as RegExpExecArray)[1] as string;
    await reader.cancel();
    controller.abort();

    const resumed = await fetch(new URL(new URL(gw.client.url).pathname, String(replica.url)), {
      headers: {
        accept: 'text/event-stream',
        'mcp-session-id': session,
        'mcp-protocol-version': '2025-11-25',
        'last-event-id': lastEventId,
      },
    });
    expect(resumed.status).toBe(200);
    const events = (await resumed.text())
      .split('\n')
      .filter((l) => l.startsWith('data: ') && l.length > 6)
      .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
    expect(events.at(-1)).toMatchObject({ id: 42, result: { isError: true } });
  });
});

describe('bad input', () => {
  const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };

  test('forged, expired, ended and foreign session ids get 404', async () => {
    expect((await post('mcs1.forged', ping)).status).toBe(404);
    const tokens = new SessionTokens(new Cipher(gw.config.encryption), -1000);
    const expired = tokens.issue({
      projectId: 'p',
      caller: 'anonymous:anonymous',
      version: '2025-11-25',
      capabilities: {},
    });
    expect((await post(expired.token, ping)).status).toBe(404);
    // A session of another project is foreign here, even for the same caller.
    const foreign = String((await initialize(gw.clientFor('other').url)).headers.get('mcp-session-id'));
    expect((await post(foreign, ping)).status).toBe(404);
    const own = String((await initialize()).headers.get('mcp-session-id'));
    expect((await post(own, ping)).status).toBe(200);
  });

  test('unknown versions: -32602 with the supported list on initialize, -32022 on a session request', async () => {
    const init = await initialize(gw.client.url, '1999-01-01');
    const body = (await init.json()) as { error: { code: number; data: { supported: string[] } } };
    expect(body.error.code).toBe(-32602);
    expect(body.error.data.supported).toEqual(['2025-11-25', '2025-06-18', '2025-03-26']);
    const session = String((await initialize()).headers.get('mcp-session-id'));
    const res = await post(session, ping, { 'mcp-protocol-version': '1999-01-01' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32022);
  });

  test("a 2026 client's initialize is still a removed method (404, -32601)", async () => {
    const res = await fetch(gw.client.url, {
      method: 'POST',
      headers: { ...HEADERS, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'initialize' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    expect(res.status).toBe(404);
  });
});
