/**
 * Clients that cannot take a task calling a tool the upstream runs only as a task (docs/interop.md): the
 * gateway runs the durable task and answers the call, within the project's wait limit; past it the answer
 * names the task, which keeps running. Real gateway, Temporal dev server and example upstream.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({
    projects: (url) => [
      {
        slug: 'gated',
        namespacing: false,
        features: { tasks: false },
        upstreams: [{ alias: 'example', url }],
      },
      {
        slug: 'hasty',
        namespacing: false,
        limits: { inlineTaskWaitMs: 100 },
        upstreams: [{ alias: 'example', url }],
      },
    ],
  });
});
afterAll(async () => {
  await gw?.close();
});

test('the answer is the final result, streamed with progress when the client asks for it', async () => {
  const res = await fetch(gw.client.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'failing_job',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: {
        name: 'failing_job',
        arguments: {},
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {},
          progressToken: 'p1',
        },
      },
    }),
  });
  const body = await res.text();
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const events = body
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
  const progress = events.filter((e) => e.method === 'notifications/progress');
  expect(progress.length).toBeGreaterThan(0);
  expect(progress[0]).toMatchObject({ params: { progressToken: 'p1' } });
  expect(events.at(-1)).toMatchObject({ id: 7, result: { resultType: 'complete', isError: true } });
});

test("the project's Tasks gate still decides: with it off, the upstream's -32021 reaches the client", async () => {
  const reply = await gw.clientFor('gated').callTool('failing_job', {}, { tasks: false });
  expect(reply.status).toBe(400);
  expect(reply.body.error).toMatchObject({
    code: -32021,
    data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
  });
});

test('past the wait limit the answer names the task, which keeps running and can be followed up', async () => {
  const client = gw.clientFor('hasty');
  const reply = await client.callTool('failing_job', {}, { tasks: false });
  expect(reply.body.error).toMatchObject({ code: -31010 });
  const taskId = (reply.body.error?.data as { taskId?: string } | undefined)?.taskId;
  expect(taskId).toMatch(/^trt_/);
  const done = await client.waitForTask(taskId as string);
  expect(done).toMatchObject({ status: 'completed', result: { isError: true } });
});

describe('a task result without resultType (the extension leaves it free-form)', () => {
  test('answered inline, it carries resultType, and the SDK 2.x client in 2026-07-28 mode takes it', async () => {
    const client = new Client(
      { name: 'sdk2-inline', version: '2.4.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(gw.client.url)));
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const result = await client.callTool({ name: 'bare_result_job', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: 'A bare result' }]);
    expect(result.isError).toBe(false);
    await client.close();

    // On the wire, as any client sees it.
    const reply = await gw.client.callTool('bare_result_job', {}, { tasks: false });
    expect(reply.body.result).toMatchObject({ resultType: 'complete', content: [{ text: 'A bare result' }] });
  });
});
