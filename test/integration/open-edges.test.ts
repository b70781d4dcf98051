/**
 * The protocol's open edges that the gateway now decides (docs/protocol-decisions.md, "Open edges"),
 * against the real gateway: results an upstream may not give on the ordinary path are refused, task ids
 * a client names in `_meta` never reach an upstream, and a 2025-era upstream's read carries the cache
 * hints 2026-07-28 requires.
 */
import type { JsonRpcRequest } from '../../src/protocol';
import { META } from '../../src/protocol';
import type { Sdk1Upstream } from '../fixtures/sdk1-upstream';
import { startSdk1Upstream } from '../fixtures/sdk1-upstream';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import type { HostileUpstream } from '../helpers/hostile-upstream';
import { startHostileUpstream } from '../helpers/hostile-upstream';
import { TASKS_CAPS } from '../helpers/mcp-client';

const toolCallMetas: Array<Record<string, unknown>> = [];
let hostile: HostileUpstream;
let legacy: Sdk1Upstream;
let gw: TestGateway;

/** What the hostile upstream answers, by method: results no upstream may give on the ordinary path. */
const WRONG: Record<string, Record<string, unknown>> = {
  'resources/read': {
    resultType: 'task',
    taskId: 'u-1',
    status: 'working',
    createdAt: '2026-12-01T00:00:00Z',
    lastUpdatedAt: '2026-12-01T00:00:00Z',
    ttlMs: 60_000,
  },
  'resources/list': { resultType: 'input_required', inputRequests: {} },
  'completion/complete': { resultType: 'input_required', requestState: 'x' },
};

beforeAll(async () => {
  hostile = await startHostileUpstream({
    capabilities: { resources: {}, completions: {} },
    onRequest: (_req, res, message) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: WRONG[message.method] ?? {} }));
    },
  });
  legacy = await startSdk1Upstream('stateless');
  gw = await startTestGateway({
    upstream: {
      onRequest: (request: JsonRpcRequest) => {
        if (request.method === 'tools/call')
          toolCallMetas.push((request.params as { _meta: Record<string, unknown> })._meta);
      },
    },
    projects: () => [
      { slug: 'hostile', namespacing: false, upstreams: [{ alias: 'bad', url: hostile.url }] },
      { slug: 'legacy', namespacing: false, upstreams: [{ alias: 'old', url: legacy.url }] },
    ],
  });
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await hostile?.close();
  await legacy?.close();
});

test.each([
  ['resources/read', { uri: 'test://x' }, 'an unrequested task'],
  ['resources/list', {}, 'an unrequested input request'],
  [
    'completion/complete',
    { ref: { type: 'ref/resource', uri: 'test://x' }, argument: { name: 'a', value: 'b' } },
    'an unrequested input request',
  ],
])(
  'an upstream answering %s with a result it may not give: -32603, never relayed',
  async (method, params, what) => {
    const reply = await gw.clientFor('hostile').request(method, params, { capabilities: TASKS_CAPS });
    expect(reply.body.result).toBeUndefined();
    expect(reply.body.error).toMatchObject({
      code: -32603,
      message: `Upstream "bad" answered ${method} with ${what}`,
    });
  },
);

test('task ids a client names in _meta never reach an upstream, on either path', async () => {
  const created = await gw.client.callTool('slow_compute', { seconds: 1, label: 'related' });
  const taskId = String(created.body.result?.taskId);
  expect(taskId).toMatch(/^trt_/);
  const meta = {
    [META.relatedTaskIds]: [taskId],
    [META.legacyRelatedTask]: { taskId },
    'com.example/kept': 'yes',
  };
  toolCallMetas.length = 0;
  await gw.client.callTool('greet', { name: 'Related' }, { tasks: false, meta });
  await gw.client.callTool('slow_compute', { seconds: 1, label: 'again' }, { meta });
  expect(toolCallMetas).toHaveLength(2);
  for (const sent of toolCallMetas) {
    expect(sent['com.example/kept']).toBe('yes');
    expect(JSON.stringify(sent)).not.toContain(taskId);
  }
});

test('tasks/* need the per-request envelope like every request (-32602, HTTP 400)', async () => {
  const reply = await gw.client.post(
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { taskId: 'trt_x' } }),
    {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-method': 'tasks/get',
      'mcp-name': 'trt_x',
      'mcp-protocol-version': '2026-07-28',
    },
  );
  expect(reply.status).toBe(400);
  expect(reply.body.error?.code).toBe(-32602);
});

test("a 2025-era upstream's resources/read carries the cache hints 2026-07-28 requires (not cached)", async () => {
  const reply = await gw
    .clientFor('legacy')
    .request('resources/read', { uri: 'fixture://readme' }, { tasks: false });
  expect(reply.body.result).toMatchObject({
    resultType: 'complete',
    ttlMs: 0,
    cacheScope: 'public',
    contents: [{ uri: 'fixture://readme', text: 'hello from sdk1' }],
  });
});
