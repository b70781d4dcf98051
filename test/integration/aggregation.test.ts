/**
 * A project with several upstreams looks like one server: namespaced names route to their owner,
 * colliding names are refused at configuration time, and an upstream that goes down degrades lists
 * instead of breaking them.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import type { ExampleUpstream } from '../../examples/upstream/server';
import { startExampleUpstream } from '../../examples/upstream/server';
import type { ConfigInput } from '../../src/config/config';
import { parseConfig } from '../../src/config/config';
import type { Runtime } from '../../src/main/runtime';
import { startRuntime } from '../../src/main/runtime';
import { generateKey } from '../../src/store/cipher';
import { McpTestClient } from '../helpers/mcp-client';
import { testStoreConfig } from '../helpers/store';
import { testTemporal } from '../helpers/temporal';

let dir: string;
let alpha: ExampleUpstream;
let beta: ExampleUpstream;
const runtimes: Runtime[] = [];

async function config(project: Record<string, unknown>): Promise<ConfigInput> {
  const t = testTemporal();
  return {
    http: { port: 0 },
    temporal: { address: t.address, namespace: t.namespace, taskQueue: `agg-${randomUUID()}` },
    store: await testStoreConfig(dir),
    encryption: { activeKeyId: 'k1', keys: { k1: generateKey() } },
    projects: [{ authMode: 'anonymous', ...project } as never],
  };
}

async function gateway(project: Record<string, unknown>): Promise<McpTestClient> {
  const rt = await startRuntime({
    config: parseConfig(await config(project)),
    logger: pino({ level: 'silent' }),
    api: true,
    worker: false,
  });
  runtimes.push(rt);
  return new McpTestClient(`${rt.url}/v1/mcp/${String(project.slug)}`);
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-agg-'));
  alpha = await startExampleUpstream({ name: 'alpha' });
  beta = await startExampleUpstream({ name: 'beta' });
});

afterAll(async () => {
  for (const rt of runtimes) await rt.close();
  await alpha?.close();
  await beta?.close();
  rmSync(dir, { recursive: true, force: true });
});

const twoUpstreams = () => [
  { alias: 'alpha', url: alpha.url },
  { alias: 'beta', url: beta.url },
];

test('colliding tool names are namespaced and each name routes to its own upstream', async () => {
  const client = await gateway({ slug: 'both', upstreams: twoUpstreams() });
  const list = await client.request('tools/list', {}, { tasks: false });
  const names = (list.body.result?.tools as Array<{ name: string }>).map((t) => t.name);
  expect(names).toEqual(expect.arrayContaining(['alpha.greet', 'beta.greet', 'alpha.slow_compute']));
  expect(names).not.toContain('greet');

  const before = { a: alpha.stats.toolCalls['greet'] ?? 0, b: beta.stats.toolCalls['greet'] ?? 0 };
  const reply = await client.callTool('beta.greet', { name: 'Bea' }, { tasks: false });
  expect(reply.body.result?.content).toEqual([{ type: 'text', text: 'Hello, Bea!' }]);
  expect(beta.stats.toolCalls['greet']).toBe(before.b + 1);
  expect(alpha.stats.toolCalls['greet'] ?? 0).toBe(before.a);
  // The upstream saw its own name, in the body and in the Mcp-Name header.
  expect(beta.stats.lastHeaders?.['mcp-name']).toBe('greet');

  const unknown = await client.callTool('gamma.greet', {}, { tasks: false });
  expect(unknown.body.error).toMatchObject({ code: -32602, message: expect.stringContaining('gamma.greet') });
});

test('namespacing off with colliding names is refused when the configuration is applied', async () => {
  await expect(gateway({ slug: 'flat', namespacing: false, upstreams: twoUpstreams() })).rejects.toThrow(
    /namespacing off.*tool "greet" \(alpha, beta\)/s,
  );
});

test('aggregated lists paginate with one opaque cursor and conservative cache hints', async () => {
  const client = await gateway({ slug: 'pages', upstreams: twoUpstreams() });
  const first = await client.request('tools/list', {}, { tasks: false });
  expect(first.body.result?.ttlMs).toEqual(expect.any(Number));
  expect(first.body.result?.cacheScope).toBe('public');
  const bad = await client.request('tools/list', { cursor: 'not-a-cursor' }, { tasks: false });
  expect(bad.body.error?.code).toBe(-32602);
});

test('an upstream that goes down is left out of lists, named in call errors, and used again when back', async () => {
  const port = beta.port;
  const client = await gateway({ slug: 'degrade', upstreams: twoUpstreams() });
  await beta.close();

  const list = await client.request('tools/list', {}, { tasks: false });
  expect(list.status).toBe(200);
  const names = (list.body.result?.tools as Array<{ name: string }>).map((t) => t.name);
  expect(names).toContain('alpha.greet');
  expect(names.some((n) => n.startsWith('beta.'))).toBe(false);
  expect(list.body.result?.ttlMs).toBeLessThanOrEqual(5_000);

  const call = await client.callTool('beta.greet', { name: 'x' }, { tasks: false });
  expect(call.status).toBe(502);
  expect(call.body.error).toMatchObject({ code: -31001, message: expect.stringContaining('"beta"') });

  beta = await startExampleUpstream({ name: 'beta', port });
  const again = await client.callTool('beta.greet', { name: 'back' }, { tasks: false });
  expect(again.body.result?.content).toEqual([{ type: 'text', text: 'Hello, back!' }]);
  const relisted = await client.request('tools/list', {}, { tasks: false });
  expect((relisted.body.result?.tools as Array<{ name: string }>).map((t) => t.name)).toContain('beta.greet');
});
