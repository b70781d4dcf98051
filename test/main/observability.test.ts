/**
 * Observability of a real `serve all` process: `/healthz`, `/readyz` (store, Temporal, worker), `/metrics`
 * in Prometheus form (the gateway's, including upstream calls, and the Temporal SDK's), OpenTelemetry
 * spans exported over OTLP (HTTP, Temporal client, workflow and activity) with the trace context reaching
 * the upstream, and request log lines carrying request id, project and trace.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Koa from 'koa';
import type { ExampleUpstream } from '../../examples/upstream/server';
import { startExampleUpstream } from '../../examples/upstream/server';
import { healthRoutes } from '../../src/api/health';
import { getFreePort } from '../../src/tooling/processes';
import { McpTestClient } from '../helpers/mcp-client';
import { killChildren, spawnServe, waitFor, writeServeConfig } from '../helpers/serve-process';
import { metricSample } from '../helpers/metrics';

let dir: string;
let upstream: ExampleUpstream;
let collector: Server;
const exported: Record<string, unknown>[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-observability-'));
  upstream = await startExampleUpstream({ pollIntervalMs: 100 });
  // A minimal OTLP/HTTP (JSON) trace receiver.
  collector = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      if (req.url === '/v1/traces') exported.push(JSON.parse(body) as Record<string, unknown>);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
});
afterAll(async () => {
  await killChildren(children);
  await upstream?.close();
  await new Promise((r) => collector?.close(r));
  rmSync(dir, { recursive: true, force: true });
});

interface OtlpSpan {
  traceId: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: { stringValue?: string } }[];
}

/** The value of the sample of `name` with exactly these labels (in any order), if there is one. */

function spans(): OtlpSpan[] {
  return exported.flatMap((e) =>
    ((e.resourceSpans as { scopeSpans: { spans: OtlpSpan[] }[] }[] | undefined) ?? []).flatMap((r) =>
      r.scopeSpans.flatMap((s) => s.spans),
    ),
  );
}

test('health, readiness, metrics, traces and request logs of a serve process', async () => {
  const port = await getFreePort();
  const healthPort = await getFreePort();
  const configFile = writeServeConfig(dir, {
    port,
    upstreamUrl: upstream.url,
    store: { sqliteFile: path.join(dir, 'taskrouter.db') },
    sections: { health: { port: healthPort } },
  });
  const logFile = path.join(dir, 'serve.log');
  const child = spawnServe(configFile, 'debug', ['ignore', 'pipe', 'pipe'], {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
    OTEL_SERVICE_NAME: 'taskrouter-test',
  });
  children.push(child);
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  await waitFor(
    () => out.includes('taskrouter started'),
    () => `serve did not start:\n${out}`,
  );
  const base = `http://127.0.0.1:${port}`;

  expect((await fetch(`${base}/healthz`)).status).toBe(200);
  const ready = await fetch(`${base}/readyz`);
  expect(ready.status).toBe(200);
  expect(await ready.json()).toEqual({ ready: true, checks: { store: 'ok', temporal: 'ok', worker: 'ok' } });

  const client = new McpTestClient(`${base}/v1/mcp/demo`);
  const reply = await client.callTool('greet', { name: 'Tracy' }, { tasks: false });
  expect(reply.status).toBe(200);
  const requestId = reply.headers.get('x-request-id');
  expect(requestId).toMatch(/^[0-9a-f]{16}$/);

  // The W3C trace context reached the upstream, and the same trace was exported.
  const traceparent = String(upstream.stats.lastHeaders?.['traceparent'] ?? '');
  expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
  const traceId = traceparent.split('-')[1] as string;
  await waitFor(
    () => spans().filter((s) => s.traceId === traceId).length >= 2,
    () => `no spans of trace ${traceId}: ${JSON.stringify(spans().map((s) => s.name))}`,
    20_000,
  );
  const kinds = spans()
    .filter((s) => s.traceId === traceId)
    .map((s) => s.kind);
  expect(kinds).toEqual(expect.arrayContaining([2, 3])); // SERVER (the MCP request), CLIENT (the upstream)

  // A task: its workflow's spans (the bundle's interceptors) join the trace of the request that created it.
  const created = await client.callTool('slow_compute', { seconds: 1, label: 'traced' });
  expect(created.body.result?.resultType).toBe('task');
  await client.waitForTask(String(created.body.result?.taskId));
  const named = (name: string) => spans().filter((s) => s.name === name);
  await waitFor(
    () => named('RunWorkflow:taskWorkflow').length > 0 && named('RunActivity:enlistWatch').length > 0,
    () => `no workflow spans: ${JSON.stringify([...new Set(spans().map((s) => s.name))])}`,
    20_000,
  );
  const [run] = named('RunWorkflow:taskWorkflow') as [OtlpSpan];
  const sameTrace = spans().filter((s) => s.traceId === run.traceId);
  expect(sameTrace.map((s) => s.name)).toEqual(
    expect.arrayContaining([
      // The API made the first call itself, then started the workflow once the upstream answered with a
      // task (tasks.firstCallFrom: api): a plain start, and the workflow begins at the watch: it enlists
      // the task with the watch hub (the default tasks.watchBy), whose signal continues the trace.
      'StartWorkflow:taskWorkflow',
      'StartActivity:enlistWatch',
      'RunActivity:enlistWatch',
      'SignalWorkflow:watchObserved',
    ]),
  );
  expect(sameTrace.map((s) => s.kind)).toEqual(expect.arrayContaining([2, 3])); // the MCP request, upstream calls
  const workflowId = run.attributes?.find((a) => a.key === 'temporalWorkflowId')?.value.stringValue;
  expect(workflowId).toMatch(/^task-/);

  // Metrics name every project and upstream: not on the API port (the public surface) by default, but on
  // the internal health port, with health and readiness.
  expect((await fetch(`${base}/metrics`)).status).toBe(404);
  const internal = `http://127.0.0.1:${healthPort}`;
  expect((await fetch(`${internal}/healthz`)).status).toBe(200);
  expect((await fetch(`${internal}/readyz`)).status).toBe(200);
  const metrics = await (await fetch(`${internal}/metrics`)).text();
  // Upstream calls by project, alias, method and outcome: the ordinary call (API) and the task's (worker).
  const upstreamLabels = { project: 'demo', upstream: 'example', method: 'tools/call' };
  expect(
    metricSample(metrics, 'taskrouter_upstream_calls_total', { ...upstreamLabels, outcome: 'ok' }),
  ).toBeGreaterThanOrEqual(2);
  expect(
    metricSample(metrics, 'taskrouter_upstream_call_duration_seconds_count', upstreamLabels),
  ).toBeGreaterThanOrEqual(2);
  expect(
    metricSample(metrics, 'taskrouter_upstream_calls_total', {
      ...upstreamLabels,
      method: 'tasks/get',
      outcome: 'ok',
    }),
  ).toBeGreaterThanOrEqual(1);
  expect(metrics).toMatch(
    /taskrouter_mcp_requests_total\{method="tools\/call",era="2026-07-28",outcome="ok"\} [1-9]/,
  );
  expect(metrics).toMatch(/taskrouter_mcp_request_duration_seconds_bucket/);
  expect(metrics).toMatch(/taskrouter_process_resident_memory_bytes/);
  // The Temporal SDK's own worker metrics come along.
  expect(metrics).toMatch(/^temporal_/m);

  // The request's log line says which request, project and trace it is about.
  writeFileSync(logFile, out);
  const line = readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.msg === 'mcp request' && l.requestId === requestId);
  expect(line).toMatchObject({ requestId, project: 'demo', traceId });
}, 120_000);

test('readiness names what is missing (503)', async () => {
  const app = new Koa();
  app.use(
    healthRoutes({
      checks: {
        store: async () => {},
        temporal: async () => {
          throw new Error('connection refused');
        },
      },
      metrics: { token: 'metrics-token-0123456789' },
    }),
  );
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({
      ready: false,
      checks: { store: 'ok', temporal: 'connection refused' },
    });
    expect((await fetch(`${base}/metrics`)).status).toBe(401);
    const metrics = await fetch(`${base}/metrics`, {
      headers: { authorization: 'Bearer metrics-token-0123456789' },
    });
    expect(metrics.status).toBe(200);
  } finally {
    server.close();
  }
});

test('/metrics is served only where it is asked for: a token, or made public', async () => {
  const serve = async (deps: Parameters<typeof healthRoutes>[0]) => {
    const app = new Koa();
    app.use(healthRoutes(deps));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  };
  const hidden = await serve({});
  const open = await serve({ metrics: {} });
  try {
    expect((await fetch(`${hidden.base}/metrics`)).status).toBe(404);
    expect((await fetch(`${hidden.base}/healthz`)).status).toBe(200);
    const metrics = await fetch(`${open.base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/taskrouter_process_resident_memory_bytes/);
  } finally {
    hidden.server.close();
    open.server.close();
  }
});
