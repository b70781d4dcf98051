/**
 * SDK 1.x servers (the 2025 era most MCP servers are written in) as upstreams, stateless and stateful,
 * and upstreams that speak no MCP at all, behind the real gateway (docs/interop.md, "Upstreams of the
 * 2025 eras"): probing and what the admin API shows, aggregation and calls through a 2026-07-28 client,
 * one session per upstream reused and renewed, requests the upstream sends mid-call ended at once, and
 * sessions ended at shutdown.
 */
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import type { McpTestClient } from '../helpers/mcp-client';
import { resultText } from '../helpers/mcp-client';
import type { Sdk1Upstream } from '../fixtures/sdk1-upstream';
import { startHtmlServer, startSdk1Upstream } from '../fixtures/sdk1-upstream';
import { getFreePort } from '../../src/tooling/processes';
import { startExampleUpstream } from '../../examples/upstream/server';
import { adminCall } from '../helpers/admin-api';

const ADMIN_TOKEN = 'legacy-upstreams-admin-token';
const FORM = { elicitation: { form: {} } };

/** Starting the upstreams and the gateway (a Temporal worker bundles its workflows) on a busy machine. */
const START_TIMEOUT_MS = 180_000;

let stateless: Sdk1Upstream;
let stateful: Sdk1Upstream;
let html: { url: string; close(): Promise<void> };
let unreachableUrl: string;
/** The port of project `switch`'s upstream, which changes era during the tests. */
let switchPort: number;
let switching: { close(): Promise<void> } | undefined;
let gw: TestGateway;
let legacy: McpTestClient;
let mixed: McpTestClient;

beforeAll(async () => {
  [stateless, stateful, html] = await Promise.all([
    startSdk1Upstream('stateless'),
    startSdk1Upstream('stateful'),
    startHtmlServer(),
  ]);
  unreachableUrl = `http://127.0.0.1:${await getFreePort()}/mcp`;
  switchPort = await getFreePort();
  switching = await startExampleUpstream({ port: switchPort });
  gw = await startTestGateway({
    config: { admin: { token: ADMIN_TOKEN } },
    projects: () => [
      {
        slug: 'legacy',
        upstreams: [
          { alias: 'stateless', url: stateless.url },
          { alias: 'stateful', url: stateful.url },
        ],
      },
      { slug: 'switch', upstreams: [{ alias: 'shifty', url: `http://127.0.0.1:${switchPort}/mcp` }] },
      {
        slug: 'mixed',
        upstreams: [
          { alias: 'ok', url: stateless.url },
          { alias: 'html', url: html.url },
          { alias: 'gone', url: unreachableUrl },
        ],
      },
    ],
  });
  legacy = gw.clientFor('legacy');
  mixed = gw.clientFor('mixed');
}, START_TIMEOUT_MS);
afterAll(async () => {
  await gw?.close();
  await Promise.all([stateless?.close(), stateful?.close(), html?.close(), switching?.close()]);
});

async function admin(method: string, path: string, body?: unknown) {
  const reply = await adminCall(legacy.url, ADMIN_TOKEN, method, path, body);
  return { status: reply.status, body: (reply.body ?? {}) as Record<string, unknown> };
}

async function upstreamViews(project: string): Promise<Record<string, Record<string, unknown>>> {
  const { body } = await admin('GET', `/projects/${project}/upstreams`);
  const views = body.upstreams as Array<Record<string, unknown>>;
  return Object.fromEntries(views.map((v) => [String(v.alias), v]));
}

const names = (items: unknown) =>
  ((items ?? []) as Array<{ name?: string; uri?: string }>).map((i) => i.name ?? i.uri);

test('SDK 1.x upstreams are probed as 2025-11-25 and the admin API says so', async () => {
  const views = await upstreamViews('legacy');
  for (const alias of ['stateless', 'stateful']) {
    expect(views[alias]?.probe).toMatchObject({
      era: 'legacy',
      protocolVersion: '2025-11-25',
      probedAt: expect.any(String),
      error: null,
    });
  }
  // The 2026-07-28 example upstream next to them is modern.
  expect((await upstreamViews('demo')).example?.probe).toMatchObject({
    era: 'modern',
    protocolVersion: '2026-07-28',
  });
});

test('tools, resources and prompts of both are aggregated and callable', async () => {
  const tools = await legacy.request('tools/list');
  expect(tools.body.result).toMatchObject({ resultType: 'complete', ttlMs: expect.any(Number) });
  expect(names(tools.body.result?.tools)).toEqual(
    expect.arrayContaining(['stateless.echo', 'stateful.echo', 'stateful.ask', 'stateful.ask_get']),
  );
  for (const alias of ['stateless', 'stateful']) {
    const echo = await legacy.callTool(`${alias}.echo`, { message: alias }, { tasks: false });
    expect(echo.body.result).toMatchObject({ resultType: 'complete' });
    expect(resultText(echo.body.result)).toBe(`Echo: ${alias}`);
  }
  const resources = await legacy.request('resources/list');
  const uris = ((resources.body.result?.resources ?? []) as Array<{ uri: string }>).map((r) => r.uri);
  expect(uris).toContain('fixture://readme');
  const read = await legacy.request('resources/read', { uri: 'fixture://readme' });
  expect(read.body.result?.contents).toEqual([
    { uri: 'fixture://readme', mimeType: 'text/plain', text: 'hello from sdk1' },
  ]);
  const prompts = await legacy.request('prompts/list');
  expect(names(prompts.body.result?.prompts)).toEqual(expect.arrayContaining(['stateful.greeting']));
  const prompt = await legacy.request('prompts/get', {
    name: 'stateful.greeting',
    arguments: { who: 'Ada' },
  });
  expect(JSON.stringify(prompt.body.result?.messages)).toContain('Say hello to Ada');
  // Only 2025 versions went out, and the 2026 envelope never did.
  expect(new Set([...stateless.stats.protocolVersions, ...stateful.stats.protocolVersions])).toEqual(
    new Set(['2025-11-25']),
  );
});

test('a stateful upstream is initialized once for many calls, and again after it forgets the session', async () => {
  await legacy.callTool('stateful.echo', { message: 'warm' }, { tasks: false });
  const before = stateful.stats.initializes;
  for (let i = 0; i < 5; i++) {
    const r = await legacy.callTool('stateful.echo', { message: `call ${i}` }, { tasks: false });
    expect(resultText(r.body.result)).toBe(`Echo: call ${i}`);
  }
  await legacy.request('tools/list');
  expect(stateful.stats.initializes).toBe(before);

  stateful.forgetSessions();
  const again = await legacy.callTool('stateful.echo', { message: 'after restart' }, { tasks: false });
  expect(resultText(again.body.result)).toBe('Echo: after restart');
  expect(stateful.stats.initializes).toBe(before + 1);
  for (let i = 0; i < 3; i++) await legacy.callTool('stateful.echo', { message: 'more' }, { tasks: false });
  expect(stateful.stats.initializes).toBe(before + 1);
});

test('an elicitation the upstream sends during a call (POST or GET stream) ends the call at once', async () => {
  for (const tool of ['stateful.ask', 'stateful.ask_get']) {
    const started = Date.now();
    const reply = await legacy.callTool(tool, {}, { capabilities: FORM });
    // The fixture would wait 30 s for an answer; the gateway refuses the request instead.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(reply.body.result?.isError).toBe(true);
    expect(resultText(reply.body.result)).toContain('cannot relay elicitation/create');
  }
});

test('an HTML page and an unreachable address are stored, shown with their problem, and left out', async () => {
  const views = await upstreamViews('mixed');
  expect(views.html?.probe).toMatchObject({
    era: null,
    error: expect.stringMatching(/Not an MCP server.*text\/html/),
  });
  expect(views.gone?.probe).toMatchObject({ era: null, error: expect.stringContaining('unreachable') });
  expect(views.ok?.probe).toMatchObject({ era: 'legacy' });

  const tools = await mixed.request('tools/list');
  expect(tools.body.error).toBeUndefined();
  expect(names(tools.body.result?.tools)).toEqual(['ok.echo', 'ok.wait', 'ok.ask', 'ok.ask_get']);
  const call = await mixed.callTool('html.echo', { message: 'x' }, { tasks: false });
  expect(call.body.error?.message).toContain('Not an MCP server');

  // Added through the admin API: probed at once.
  const added = await admin('POST', '/projects/mixed/upstreams', {
    alias: 'page',
    url: html.url,
    enabled: false,
  });
  expect(added.status).toBe(201);
  const enabled = await admin('PATCH', '/projects/mixed/upstreams/page', { enabled: true });
  expect(enabled.body.probe).toMatchObject({ era: null, error: expect.stringContaining('text/html') });
  const fixed = await admin('PATCH', '/projects/mixed/upstreams/page', { url: stateful.url });
  expect(fixed.body.probe).toMatchObject({ era: 'legacy', protocolVersion: '2025-11-25', error: null });
  const again = await admin('POST', '/projects/mixed/upstreams/page/probe');
  expect(again.status).toBe(200);
  expect(again.body.probe).toMatchObject({ era: 'legacy' });
  await admin('DELETE', '/projects/mixed/upstreams/page');
});

test('an upstream replaced by a server of the other era is probed again when it refuses', async () => {
  const shifty = gw.clientFor('switch');
  const toolNames = async () => names((await shifty.request('tools/list')).body.result?.tools);
  const era = async () => ((await upstreamViews('switch')).shifty?.probe as { era: string }).era;
  expect(await toolNames()).toContain('shifty.greet');
  expect(await era()).toBe('modern');

  await switching?.close();
  switching = await startSdk1Upstream('stateful', switchPort);
  await new Promise((r) => setTimeout(r, 2_100)); // past the window in which a refusal reuses the last probe
  expect(await toolNames()).toEqual(['shifty.echo', 'shifty.wait', 'shifty.ask', 'shifty.ask_get']);
  expect(await era()).toBe('legacy');

  await switching.close();
  switching = await startExampleUpstream({ port: switchPort });
  await new Promise((r) => setTimeout(r, 2_100));
  expect(await toolNames()).toContain('shifty.greet');
  expect(await era()).toBe('modern');
});

test('the gateway ends its upstream sessions when it shuts down', async () => {
  await legacy.callTool('stateful.echo', { message: 'last' }, { tasks: false });
  const before = stateful.stats.deletes;
  await gw.stop();
  expect(stateful.stats.deletes).toBeGreaterThan(before);
  await gw.start();
});
