/**
 * Bad input gets a clear, spec-conformant error over real HTTP, and the process keeps serving.
 */
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { META, PROTOCOL_VERSION } from '../../src/protocol';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw?.close();
});

const envelope = { [META.protocolVersion]: PROTOCOL_VERSION, [META.clientCapabilities]: {} };
const baseHeaders = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': PROTOCOL_VERSION,
};

async function post(body: string, headers: Record<string, string> = {}, url = gw.client.url) {
  const res = await fetch(url, { method: 'POST', headers: { ...baseHeaders, ...headers }, body });
  const text = await res.text();
  return {
    status: res.status,
    body: text ? (JSON.parse(text) as { error?: { code: number }; id?: unknown }) : undefined,
  };
}

test.each([
  ['malformed JSON', '{"jsonrpc":"2.0",', 400, -32700],
  ['not a JSON-RPC frame', '{"hello":1}', 400, -32600],
  ['wrong jsonrpc version', '{"jsonrpc":"1.0","id":1,"method":"tools/list"}', 400, -32600],
  ['extra top-level key', '{"jsonrpc":"2.0","id":1,"method":"tools/list","extra":1}', 400, -32600],
  ['a batch', '[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]', 400, -32600],
  ['params of the wrong type', '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[1]}', 400, -32600],
])('%s → HTTP %i, %i', async (_name, body, status, code) => {
  const reply = await post(body, { 'mcp-method': 'tools/list' });
  expect(reply.status).toBe(status);
  expect(reply.body?.error?.code).toBe(code);
});

test('missing _meta fields → -32602 with HTTP 400, the request id echoed', async () => {
  const reply = await post(JSON.stringify({ jsonrpc: '2.0', id: 'r1', method: 'tools/list', params: {} }), {
    'mcp-method': 'tools/list',
  });
  expect(reply.status).toBe(400);
  expect(reply.body).toMatchObject({ id: 'r1', error: { code: -32602 } });
});

test('an unsupported version → -32022 naming the supported ones', async () => {
  const meta = { ...envelope, [META.protocolVersion]: '1900-01-01' };
  const reply = await post(
    JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: meta } }),
    {
      'mcp-method': 'tools/list',
      'mcp-protocol-version': '1900-01-01',
    },
  );
  expect(reply.status).toBe(400);
  expect(reply.body?.error).toMatchObject({
    code: -32022,
    data: { supported: [PROTOCOL_VERSION], requested: '1900-01-01' },
  });
});

test.each(['initialize', 'ping', 'logging/setLevel', 'tasks/list', 'tasks/result', 'no/such/method'])(
  '%s → -32601 with HTTP 404',
  async (method) => {
    const reply = await post(JSON.stringify({ jsonrpc: '2.0', id: 3, method, params: { _meta: envelope } }), {
      'mcp-method': method,
    });
    expect(reply.status).toBe(404);
    expect(reply.body?.error?.code).toBe(-32601);
  },
);

test('transport rules: GET 405, wrong content type 415, oversized body 413, notification 202', async () => {
  expect((await fetch(gw.client.url)).status).toBe(405);
  expect((await post('{}', { 'content-type': 'text/plain' })).status).toBe(415);
  const huge = JSON.stringify({
    jsonrpc: '2.0',
    id: 4,
    method: 'tools/list',
    params: { pad: 'x'.repeat(5_000_000) },
  });
  expect((await post(huge, { 'mcp-method': 'tools/list' })).status).toBe(413);
  const note = await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/whatever' }));
  expect(note.status).toBe(202);
});

test('unknown projects and malformed paths, without a token, look like any protected project (401)', async () => {
  const base = gw.client.url.replace(/\/demo$/, '');
  const body = JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/list', params: { _meta: envelope } });
  for (const url of [`${base}/nope`, `${base}/%E0%A4%A`]) {
    const res = await fetch(url, {
      method: 'POST',
      headers: { ...baseHeaders, 'mcp-method': 'tools/list' },
      body,
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  }
  expect((await fetch(gw.client.url.replace('/v1/mcp/demo', '/healthz'))).status).toBe(200);
});

test('DNS-rebinding protection: a foreign Host or Origin gets 403', async () => {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'tools/list', params: { _meta: envelope } });
  const origin = await post(body, { 'mcp-method': 'tools/list', origin: 'http://evil.example' });
  expect(origin.status).toBe(403);
  const loopbackOrigin = await post(body, { 'mcp-method': 'tools/list', origin: 'http://localhost:5173' });
  expect(loopbackOrigin.status).toBe(200);
});
