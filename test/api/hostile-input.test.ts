/**
 * Regression tests for what a hostile client found (issue "protocol completeness and hostile input"):
 * every answer is a clear, spec-shaped error decided before any work, and nothing reaches the upstream.
 */
import { request } from 'node:http';
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
const headers = (method: string, extra: Record<string, string> = {}) => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': PROTOCOL_VERSION,
  'mcp-method': method,
  ...extra,
});

async function post(method: string, params: Record<string, unknown>, extra: Record<string, string> = {}) {
  const res = await fetch(gw.client.url, {
    method: 'POST',
    headers: headers(method, extra),
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const text = await res.text();
  const body = (text ? JSON.parse(text) : {}) as { error?: { code: number; message: string } };
  return { status: res.status, headers: res.headers, body };
}

/** JSON text nested `depth` objects deep (built as text: stringifying it would overflow this stack too). */
function nestedText(depth: number): string {
  return '{"a":'.repeat(depth) + '"leaf"' + '}'.repeat(depth);
}

function nested(depth: number): unknown {
  return JSON.parse(nestedText(depth));
}

async function postText(method: string, body: string, extra: Record<string, string> = {}) {
  const res = await fetch(gw.client.url, { method: 'POST', headers: headers(method, extra), body });
  return { status: res.status, body: (await res.json()) as { error?: { code: number } } };
}

test('JSON nested deeper than the limit: -32602 with HTTP 400, and the upstream sees nothing', async () => {
  const calls = { ...gw.upstream.stats.toolCalls };
  const meta = JSON.stringify(envelope);
  const deep = await postText(
    'tools/call',
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":${nestedText(5000)},"_meta":${meta}}}`,
    { 'mcp-name': 'greet' },
  );
  expect(deep.status).toBe(400);
  expect(deep.body.error?.code).toBe(-32602);
  const deepMeta = await postText(
    'tools/list',
    `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":${meta.slice(0, -1)},"com.example/x":${nestedText(5000)}}}}`,
  );
  expect(deepMeta.status).toBe(400);
  expect(gw.upstream.stats.toolCalls).toEqual(calls);
  // Within the limit all is well.
  const fine = await post(
    'tools/call',
    { name: 'greet', arguments: { name: 'x', extra: nested(50) }, _meta: envelope },
    { 'mcp-name': 'greet' },
  );
  expect(fine.status).toBe(200);
});

test('a request that costs far more than its size is refused before it is parsed: -32600 naming the limit', async () => {
  const calls = { ...gw.upstream.stats.toolCalls };
  const meta = JSON.stringify(envelope);
  const names = (n: number, prefix: string) =>
    Array.from({ length: n }, (_, i) => `"${prefix}${String(i).padStart(6, '0')}":"vvvvvvvvv"`).join(',');
  // The finding: a 3.5 MB `params._meta` with 162,000 keys. Cut short at the end, so it is not even JSON:
  // had it been parsed first, the answer would be the parse error (-32700).
  const attack = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{},"_meta":{${meta.slice(1, -1)},${names(162_000, 'k')}}}}`;
  expect(attack.length).toBeGreaterThan(3_500_000);
  for (const body of [attack, attack.slice(0, -5)]) {
    const reply = await postText('tools/call', body, { 'mcp-name': 'greet' });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({
      code: -32600,
      message: expect.stringMatching(/more than 10000 members \(http\.maxJsonMembers\)/),
      data: { limit: 'http.maxJsonMembers', max: 10_000 },
    });
  }
  // The same keys spread over objects of 9,000: the limit on keys in all.
  const spread = Array.from({ length: 18 }, (_, j) => `{${names(9_000, `k${j}-`)}}`).join(',');
  const keys = await postText(
    'tools/call',
    `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"name":"x","rows":[${spread}]},"_meta":${meta}}}`,
    { 'mcp-name': 'greet' },
  );
  expect(keys.status).toBe(400);
  expect(keys.body.error).toMatchObject({ code: -32600, data: { limit: 'http.maxJsonKeys', max: 20_000 } });
  // A million empty objects: the limit on objects and arrays.
  const empties = await postText(
    'tools/call',
    `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"greet","arguments":{"name":"x","rows":[${Array(1_000_000).fill('{}').join(',')}]},"_meta":${meta}}}`,
    { 'mcp-name': 'greet' },
  );
  expect(empties.status).toBe(400);
  expect(empties.body.error).toMatchObject({
    code: -32600,
    data: { limit: 'http.maxJsonContainers', max: 100_000 },
  });
  expect(gw.upstream.stats.toolCalls).toEqual(calls);
  // Large but within every limit (and the example upstream's own body limit, 1 MB): 9,000 vendor keys
  // in `_meta`, 9,000 keys of arguments.
  const fine = await postText(
    'tools/call',
    `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"greet","arguments":{"name":"x","rows":[{${names(9_000, 'r')}}]},"_meta":{${meta.slice(1, -1)},${names(9_000, 'com.example/k')}}}}`,
    { 'mcp-name': 'greet' },
  );
  expect(fine.status).toBe(200);
  expect(fine.body.error).toBeUndefined();
  expect(gw.upstream.stats.toolCalls['greet']).toBe((calls['greet'] ?? 0) + 1);
});

test('wrong types where the spec fixes them: cursor, progressToken, logLevel', async () => {
  const cursor = await post('tools/list', { cursor: 42, _meta: envelope });
  expect(cursor.body.error?.code).toBe(-32602);
  const token = await post('tools/list', { _meta: { ...envelope, progressToken: { x: 1 } } });
  expect(token.status).toBe(400);
  expect(token.body.error?.code).toBe(-32602);
  const level = await post('tools/list', { _meta: { ...envelope, [META.logLevel]: 'loud' } });
  expect(level.body.error?.code).toBe(-32602);
});

test('a compressed body is refused (415), not read as if it were plain', async () => {
  const reply = await post('tools/list', { _meta: envelope }, { 'content-encoding': 'gzip' });
  expect(reply.status).toBe(415);
});

test('subscriptions/listen: needs a stream, a well-formed filter, and is capped per caller', async () => {
  const json = await post('subscriptions/listen', { _meta: envelope }, { accept: 'application/json' });
  expect(json.status).toBe(400);
  expect(json.body.error?.code).toBe(-32600);
  const garbage = await post('subscriptions/listen', { notifications: 'garbage', _meta: envelope });
  expect(garbage.body.error?.code).toBe(-32602);

  const open: AbortController[] = [];
  try {
    for (let i = 0; i < 16; i++) {
      const c = new AbortController();
      open.push(c);
      const res = await fetch(gw.client.url, {
        method: 'POST',
        headers: headers('subscriptions/listen'),
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: i,
          method: 'subscriptions/listen',
          params: { _meta: envelope },
        }),
        signal: c.signal,
      });
      expect(res.status).toBe(200);
    }
    // A retryable refusal (RateLimited, HTTP 429) that says when to try again.
    const over = await post('subscriptions/listen', { _meta: envelope });
    expect(over.status).toBe(429);
    expect(over.body.error?.code).toBe(-31013);
    expect(String(over.body.error?.message)).toMatch(/at most 16/i);
    expect(over.headers.get('retry-after')).toBe('5');
  } finally {
    for (const c of open) c.abort();
  }
});

test('paths below an endpoint answer JSON, not text', async () => {
  const res = await fetch(`${gw.client.url}/whatever`, {
    method: 'POST',
    headers: headers('tools/list'),
    body: '{}',
  });
  expect(res.status).toBe(404);
  expect(res.headers.get('content-type')).toMatch(/application\/json/);
  expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32601);
});

test('an answer given before the body was read closes the connection (no slow body holds it)', async () => {
  // A request that announces a large body and sends a little of it: the 415 comes at once, and the
  // server closes the connection instead of reading the rest.
  const url = new URL(gw.client.url);
  const reply = await new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { 'content-type': 'text/plain', 'content-length': '1000000' },
      },
      (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, connection: res.headers.connection });
      },
    );
    req.on('error', reject);
    req.write('x'.repeat(10));
  });
  expect(reply.status).toBe(415);
  expect(reply.connection).toBe('close');
});
