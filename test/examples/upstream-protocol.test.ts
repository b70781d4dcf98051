/**
 * The example upstream over real HTTP, its protocol rules: framing in each response mode, discovery and
 * the tool list, header and `_meta` envelope checks, unknown methods, the tasks/* gate and malformed
 * requests. upstream-tools.test.ts covers each tool's life cycle, upstream-options.test.ts its options.
 */
import { encodeHeaderValue, META, PROTOCOL_VERSION, TASKS_EXTENSION } from '../../src/protocol';
import type { Json } from './upstream-client';
import { call, errorOf, post, resultOf, rpc, upstreamFixture } from './upstream-client';

describe.each(['json', 'sse'] as const)('example upstream (%s responses)', (responseMode) => {
  const fixture = upstreamFixture(responseMode);

  it('frames successful responses in the configured mode', async () => {
    const res = await rpc(fixture.url, 'server/discover');
    if (responseMode === 'sse') {
      expect(res.contentType).toBe('text/event-stream');
      expect(res.headers.get('x-accel-buffering')).toBe('no');
    } else {
      expect(res.contentType).toBe('application/json');
    }
    resultOf(res);
  });

  it('answers server/discover with versions, capabilities and cache hints', async () => {
    const result = resultOf(await rpc(fixture.url, 'server/discover'));
    expect(result).toMatchObject({
      resultType: 'complete',
      supportedVersions: ['2026-07-28'],
      capabilities: { tools: {}, extensions: { [TASKS_EXTENSION]: {} } },
      ttlMs: 60_000,
      cacheScope: 'public',
    });
    expect((result.capabilities as Json).tasks).toBeUndefined();
  });

  it('lists exactly the fixture tools with cache hints', async () => {
    const result = resultOf(await rpc(fixture.url, 'tools/list'));
    expect((result.tools as Json[]).map((tool) => tool.name)).toEqual([
      'greet',
      'slow_compute',
      'failing_job',
      'protocol_error_job',
      'confirm_delete',
      'multi_input',
      'test_tool_with_task',
    ]);
    expect(result).toMatchObject({ resultType: 'complete', ttlMs: 60_000, cacheScope: 'public' });
  });

  it('rejects mismatched or missing headers with -32020 and HTTP 400', async () => {
    const cases: Array<[string, Json, Record<string, string | null>]> = [
      ['tools/call', { name: 'greet', arguments: { name: 'x' } }, { 'mcp-method': 'tasks/get' }],
      ['tools/call', { name: 'greet', arguments: { name: 'x' } }, { 'mcp-name': 'slow_compute' }],
      ['tools/call', { name: 'greet', arguments: { name: 'x' } }, { 'mcp-name': null }],
      ['tools/list', {}, { 'mcp-method': null }],
      ['tools/list', {}, { 'mcp-protocol-version': null }],
      ['tools/list', {}, { 'mcp-protocol-version': '2025-11-25' }],
      ['tasks/get', { taskId: 'upstream-task-x' }, { 'mcp-name': 'other' }],
    ];
    for (const [method, params, headers] of cases) {
      const res = await rpc(fixture.url, method, params, { headers });
      expect(res.status).toBe(400);
      expect(errorOf(res).code).toBe(-32020);
    }
  });

  it('decodes base64 Mcp-Name values', async () => {
    const headers = { 'mcp-name': encodeHeaderValue(' greet') };
    expect(headers['mcp-name']).toMatch(/^=\?base64\?/);
    // ' greet' is not the tool name, so the decoded value must be compared (and mismatch).
    expect(errorOf(await call(fixture.url, 'greet', { name: 'x' }, { headers })).code).toBe(-32020);
    const ok = { 'mcp-name': `=?base64?${Buffer.from('greet').toString('base64')}?=` };
    expect(resultOf(await call(fixture.url, 'greet', { name: 'x' }, { headers: ok })).resultType).toBe(
      'complete',
    );
  });

  it('validates the _meta envelope and the protocol version', async () => {
    for (const meta of [
      null,
      { [META.clientCapabilities]: {} },
      { [META.protocolVersion]: PROTOCOL_VERSION },
    ]) {
      const res = await rpc(fixture.url, 'server/discover', {}, { meta });
      expect(res.status).toBe(400);
      expect(errorOf(res).code).toBe(-32602);
    }
    const res = await rpc(
      fixture.url,
      'server/discover',
      {},
      {
        meta: { [META.protocolVersion]: '1900-01-01', [META.clientCapabilities]: {} },
        headers: { 'mcp-protocol-version': '1900-01-01' },
      },
    );
    expect(res.status).toBe(400);
    expect(errorOf(res)).toMatchObject({
      code: -32022,
      data: { supported: ['2026-07-28'], requested: '1900-01-01' },
    });
    // A supported header with an unsupported body version is a header/body mismatch, not -32022.
    const mismatch = await rpc(
      fixture.url,
      'server/discover',
      {},
      { meta: { [META.protocolVersion]: 'v999.0.0', [META.clientCapabilities]: {} } },
    );
    expect(mismatch.status).toBe(400);
    expect(errorOf(mismatch).code).toBe(-32020);
  });

  it('answers unknown and removed methods with -32601 and HTTP 404', async () => {
    for (const method of ['tasks/result', 'tasks/list', 'initialize', 'ping', 'no/such']) {
      const res = await rpc(fixture.url, method, { taskId: 'x' });
      expect(res.status).toBe(404);
      expect(errorOf(res).code).toBe(-32601);
    }
  });

  it('gates tasks/* on the extension and rejects unknown task ids', async () => {
    for (const [method, params] of [
      ['tasks/get', { taskId: 'gate-test' }],
      ['tasks/update', { taskId: 'gate-test', inputResponses: {} }],
      ['tasks/cancel', { taskId: 'gate-test' }],
    ] as const) {
      const res = await rpc(fixture.url, method, params, { caps: {} });
      expect(res.status).toBe(400);
      expect(errorOf(res)).toMatchObject({
        code: -32021,
        data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      });
      expect(errorOf(await rpc(fixture.url, method, params)).code).toBe(-32602);
    }
    expect(errorOf(await call(fixture.url, 'no_such_tool')).code).toBe(-32602);
    expect(errorOf(await call(fixture.url, 'greet', { name: 7 })).code).toBe(-32602);
  });

  it('handles non-POST, notifications and malformed bodies', async () => {
    for (const method of ['GET', 'DELETE']) {
      expect((await fetch(fixture.url, { method })).status).toBe(405);
    }
    const note = await post(fixture.url, { jsonrpc: '2.0', method: 'notifications/anything' }, {});
    expect(note.status).toBe(202);
    const parse = await post(fixture.url, '{nope', {});
    expect(parse.status).toBe(400);
    expect(errorOf(parse).code).toBe(-32700);
    const invalid = await post(fixture.url, { jsonrpc: '2.0', id: 9, method: 'tools/list', extra: 1 }, {});
    expect(invalid.status).toBe(400);
    expect(invalid.body).toMatchObject({ id: 9, error: { code: -32600 } });
  });

  it('records the headers and _meta of the last request', async () => {
    await rpc(fixture.url, 'tools/call', { name: 'greet', arguments: { name: 'h' } });
    expect(fixture.upstream.stats.lastHeaders).toMatchObject({
      'mcp-method': 'tools/call',
      'mcp-name': 'greet',
    });
    expect(fixture.upstream.stats.lastMeta?.[META.protocolVersion]).toBe(PROTOCOL_VERSION);
    expect(fixture.upstream.stats.requests).toEqual({ 'tools/call': 1 });
  });
});
