/**
 * Clients that cannot take a task calling a tool the upstream runs only as a task (docs/interop.md): the
 * gateway runs the durable task and answers the call, within the project's wait limit; past it the answer
 * names the task, which keeps running. Real gateway, Temporal dev server and example upstream.
 */
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
