/**
 * Trace context in `_meta` (SEP-414) through the gateway, both eras of upstream:
 *
 * - without tracing, the gateway stays out of the way: the client's `traceparent`, `tracestate` and
 *   `baggage` reach the upstream in `_meta` unchanged and in the request's headers too (a malformed
 *   one in neither header);
 * - with tracing (the OpenTelemetry SDK with an in-memory exporter, in this process), one trace runs from
 *   the client's `traceparent` through the gateway's MCP server span, the workflow start, the task
 *   workflow, its activities and the MCP client spans, to the `_meta` and headers the upstream received.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { tracing } from '@opentelemetry/sdk-node';
import { SpanKind } from '@opentelemetry/api';
import type { JsonRpcRequest } from '../../src/protocol';
import { startTracing } from '../../src/telemetry/tracing';
import type { Sdk1Upstream } from '../fixtures/sdk1-upstream';
import { startSdk1Upstream } from '../fixtures/sdk1-upstream';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { waitFor } from '../helpers/serve-process';

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const PARENT = 'b7ad6b7169203331';
const CLIENT_META = {
  traceparent: `00-${TRACE}-${PARENT}-01`,
  tracestate: 'client=t61rcWkgMzE',
  baggage: 'tenant=acme',
};

interface Received {
  method: string;
  meta: Record<string, unknown>;
  headers: IncomingHttpHeaders;
}

const received: Received[] = [];
let legacy: Sdk1Upstream;
let gw: TestGateway;
const exporter = new tracing.InMemorySpanExporter();
let stopTracing: (() => Promise<void>) | undefined;

beforeAll(async () => {
  legacy = await startSdk1Upstream('stateful');
  gw = await startTestGateway({
    upstream: {
      onRequest: (request: JsonRpcRequest, headers) =>
        received.push({
          method: request.method,
          meta: ((request.params as { _meta?: Record<string, unknown> } | undefined)?._meta ?? {}) as Record<
            string,
            unknown
          >,
          headers,
        }),
    },
    projects: () => [{ slug: 'legacy', namespacing: false, upstreams: [{ alias: 'old', url: legacy.url }] }],
  });
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await stopTracing?.();
  await legacy?.close();
});

const traceIdOf = (traceparent: unknown) => String(traceparent).split('-')[1];
const parentIdOf = (traceparent: unknown) => String(traceparent).split('-')[2];

test('without tracing, the client context reaches both eras of upstream in _meta and in the headers', async () => {
  received.length = 0;
  const greeted = await gw.client.callTool('greet', { name: 'Trace' }, { tasks: false, meta: CLIENT_META });
  expect(greeted.body.error).toBeUndefined();
  const call = received.find((r) => r.method === 'tools/call');
  expect(call?.meta).toMatchObject(CLIENT_META);
  expect(call?.headers).toMatchObject(CLIENT_META);

  const echoed = await gw
    .clientFor('legacy')
    .callTool('echo', { message: 'traced' }, { tasks: false, meta: CLIENT_META });
  expect(echoed.body.error).toBeUndefined();
  const legacyCall = legacy.stats.received.find((r) => r.method === 'tools/call');
  expect(legacyCall?.meta).toMatchObject(CLIENT_META);
  expect(legacyCall?.headers).toMatchObject(CLIENT_META);

  // A malformed traceparent is relayed in `_meta` as any unknown key would be, but never becomes a header.
  received.length = 0;
  const bad = { traceparent: 'not-a-trace', tracestate: 'client=x' };
  await gw.client.callTool('greet', { name: 'Bad' }, { tasks: false, meta: bad });
  const badCall = received.find((r) => r.method === 'tools/call');
  expect(badCall?.meta).toMatchObject(bad);
  expect(badCall?.headers['traceparent']).toBeUndefined();
  expect(badCall?.headers['tracestate']).toBeUndefined();
});

test("with tracing, one trace from the client's traceparent through the API, the workflow, the activities and the upstream", async () => {
  stopTracing = await startTracing('taskrouter-test', {
    spanProcessors: [new tracing.SimpleSpanProcessor(exporter)],
  });
  // The roles pick up tracing when they start (the Temporal client's and the activities' interceptors).
  await gw.stop();
  await gw.start();
  received.length = 0;

  const created = await gw.client.callTool(
    'slow_compute',
    { seconds: 1, label: 'traced' },
    { meta: CLIENT_META },
  );
  expect(created.body.result?.resultType).toBe('task');
  await gw.client.waitForTask(String(created.body.result?.taskId));

  const spans = () => exporter.getFinishedSpans();
  const named = (name: string) => spans().filter((s) => s.name === name);
  await waitFor(
    () => named('RunWorkflow:taskWorkflow').length > 0 && named('RunActivity:enlistWatch').length > 0,
    () => `no workflow spans: ${JSON.stringify([...new Set(spans().map((s) => s.name))])}`,
    20_000,
  );

  // The gateway's MCP server span is the child of the client's span.
  const server = spans().find((s) => s.name === 'tools/call slow_compute' && s.kind === SpanKind.SERVER);
  expect(server?.spanContext().traceId).toBe(TRACE);
  expect(server?.parentSpanContext?.spanId).toBe(PARENT);
  expect(server?.attributes).toMatchObject({
    'mcp.method.name': 'tools/call',
    'gen_ai.tool.name': 'slow_compute',
  });

  // The workflow start, the workflow and its activities are in the client's trace. The API made the
  // first call itself (tasks.firstCallFrom: api) and started the workflow once the upstream answered
  // with a task, so the start is a plain one and the workflow begins at the watch: it enlists the task
  // with the watch hub (the default tasks.watchBy), whose polls and signal continue the trace.
  const inTrace = spans().filter((s) => s.spanContext().traceId === TRACE);
  expect(inTrace.map((s) => s.name)).toEqual(
    expect.arrayContaining([
      'StartWorkflow:taskWorkflow',
      'RunWorkflow:taskWorkflow',
      'StartActivity:enlistWatch',
      'RunActivity:enlistWatch',
      'SignalWorkflow:watchObserved',
    ]),
  );

  // The upstream received the trace in `_meta` and in the headers, with the client's tracestate and
  // baggage; the `_meta` parent is the gateway's MCP client span for that request.
  const clientSpans = spans().filter((s) => s.kind === SpanKind.CLIENT && s.spanContext().traceId === TRACE);
  const call = received.find((r) => r.method === 'tools/call');
  expect(traceIdOf(call?.meta['traceparent'])).toBe(TRACE);
  // One header, written once (by the HTTP instrumentation, under the MCP client span).
  expect(call?.headers['traceparent']).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
  expect(call?.meta['tracestate']).toBe(CLIENT_META.tracestate);
  expect(String(call?.meta['baggage'])).toContain('tenant=acme');
  const callSpan = clientSpans.find((s) => s.spanContext().spanId === parentIdOf(call?.meta['traceparent']));
  expect(callSpan?.name).toBe('tools/call slow_compute');
  expect(callSpan?.attributes['mcp.method.name']).toBe('tools/call');

  // The polls of the upstream task, made by the watch hub, continue the same trace.
  const polls = received.filter((r) => r.method === 'tasks/get');
  expect(polls.length).toBeGreaterThan(0);
  for (const poll of polls) {
    expect(traceIdOf(poll.meta['traceparent'])).toBe(TRACE);
    expect(traceIdOf(poll.headers['traceparent'])).toBe(TRACE);
  }
  // A 2025-era upstream gets the same: its own MCP client span's context in `_meta` and the headers.
  legacy.stats.received.length = 0;
  const echoed = await gw
    .clientFor('legacy')
    .callTool('echo', { message: 'traced' }, { tasks: false, meta: CLIENT_META });
  expect(echoed.body.error).toBeUndefined();
  const legacyCall = legacy.stats.received.find((r) => r.method === 'tools/call');
  const legacyMeta = legacyCall?.meta as Record<string, unknown>;
  expect(traceIdOf(legacyMeta['traceparent'])).toBe(TRACE);
  expect(legacyCall?.headers['traceparent']).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
  const legacySpan = spans().find((s) => s.spanContext().spanId === parentIdOf(legacyMeta['traceparent']));
  expect(legacySpan?.name).toBe('tools/call echo');
  expect(legacySpan?.kind).toBe(SpanKind.CLIENT);

  // No span carries the task id (a secret).
  const taskId = String(created.body.result?.taskId);
  expect(JSON.stringify(spans().map((s) => [s.name, s.attributes]))).not.toContain(taskId);
});
