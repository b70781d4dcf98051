/**
 * 2025-era clients on the gateway's endpoint, with the official SDKs as they are used today: the SDK 1.x
 * `Client` (the base of most MCP clients) and the SDK 2.x `Client` in its default (legacy) mode and in
 * `auto` mode. Real HTTP, a real Temporal dev server and the example upstream behind the gateway.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as Client2, StreamableHTTPClientTransport as Transport2 } from '@modelcontextprotocol/client';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw?.close();
});

const TASK_CAPABILITIES = { tasks: { list: {}, cancel: {}, requests: { elicitation: { create: {} } } } };

async function sdk1(capabilities: Record<string, unknown> = {}) {
  const client = new Client({ name: 'sdk1-test', version: '1.0.0' }, { capabilities });
  const transport = new StreamableHTTPClientTransport(new URL(gw.client.url));
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

    const seen: string[] = [];
    let final: unknown;
    for await (const m of client.experimental.tasks.callToolStream(
      { name: 'slow_compute', arguments: { seconds: 0.3 } },
      CallToolResultSchema,
    )) {
      seen.push(m.type);
      if (m.type === 'result') final = m.result;
      if (m.type === 'error') throw m.error;
    }
    expect(seen[0]).toBe('taskCreated');
    expect(text(final)).toContain('slow_compute');

    let confirmed: unknown;
    for await (const m of client.experimental.tasks.callToolStream(
      { name: 'confirm_delete', arguments: { filename: 'a.txt' } },
      CallToolResultSchema,
    )) {
      if (m.type === 'result') confirmed = m.result;
      if (m.type === 'error') throw m.error;
    }
    expect(text(confirmed)).toMatch(/deleted/i);
    await client.close();
  });
});

describe('SDK 2.x client', () => {
  test.each([
    ['default (legacy)', undefined],
    ['auto', { mode: 'auto' as const }],
  ])('%s: connects, lists and calls an ordinary and a task-only tool', async (_name, versionNegotiation) => {
    const client = new Client2(
      { name: 'sdk2-test', version: '2.0.0' },
      versionNegotiation ? { versionNegotiation } : {},
    );
    await client.connect(new Transport2(new URL(gw.client.url)));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('greet');
    const greeting = await client.callTool({ name: 'greet', arguments: { name: 'Bo' } });
    expect(text(greeting)).toContain('Bo');
    const job = await client.callTool({ name: 'failing_job', arguments: {} });
    expect(job.isError).toBe(true);
    await client.close();
  });
});
