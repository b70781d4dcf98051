/**
 * The example upstream's conformance fixtures (the suite's "everything server" set) over real HTTP, the
 * server and its tools: capabilities, the tool list, content tools, progress and log notifications on the
 * response stream, Mcp-Param-* headers, the DNS-rebinding guard and the fixtures switched off.
 * test/conformance runs the suite itself; the other conformance-fixtures-*.test.ts cover the rest.
 */
import { request } from 'node:http';
import { startExampleUpstream } from '../../examples/upstream/server';
import { META, PROTOCOL_VERSION } from '../../src/protocol';
import type { Json } from './conformance-fixtures-client';
import {
  errorOf,
  fixturesUpstream,
  lastMessage,
  nextRequestId,
  resultOf,
  rpc,
} from './conformance-fixtures-client';

describe('example upstream conformance fixtures', () => {
  const fixture = fixturesUpstream();

  it('advertises prompts, resources, completions and list-changed in server/discover', async () => {
    const result = resultOf(await rpc(fixture.url, 'server/discover'));
    expect(result.capabilities).toMatchObject({
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { subscribe: true },
      completions: {},
    });
  });

  it('lists the tasks tools first, then the everything-server tools', async () => {
    const names = (resultOf(await rpc(fixture.url, 'tools/list')).tools as Json[]).map((tool) => tool.name);
    expect(names[0]).toBe('greet');
    expect(names).toEqual(
      expect.arrayContaining([
        'test_simple_text',
        'test_image_content',
        'test_audio_content',
        'test_embedded_resource',
        'test_multiple_content_types',
        'test_error_handling',
        'test_tool_with_progress',
        'test_missing_capability',
        'test_input_required_result_elicitation',
        'test_trigger_tool_change',
      ]),
    );
  });

  it.each([
    ['test_simple_text', { type: 'text', text: 'This is a simple text response for testing.' }],
    ['test_image_content', { type: 'image', mimeType: 'image/png' }],
    ['test_audio_content', { type: 'audio', mimeType: 'audio/wav' }],
    [
      'test_embedded_resource',
      { type: 'resource', resource: expect.objectContaining({ mimeType: 'text/plain' }) },
    ],
  ])('%s returns its fixed content', async (name, block) => {
    const result = resultOf(await rpc(fixture.url, 'tools/call', { name, arguments: {} }));
    expect(result.resultType).toBe('complete');
    expect(result.content).toEqual([expect.objectContaining(block)]);
  });

  it('test_audio_content is a decodable RIFF/WAVE clip', async () => {
    const result = resultOf(await rpc(fixture.url, 'tools/call', { name: 'test_audio_content' }));
    const data = Buffer.from(((result.content as Json[])[0] as { data: string }).data, 'base64');
    expect(data.subarray(0, 4).toString('ascii')).toBe('RIFF');
    expect(data.subarray(8, 12).toString('ascii')).toBe('WAVE');
  });

  it('test_multiple_content_types mixes text, image and resource; test_error_handling sets isError', async () => {
    const mixed = resultOf(await rpc(fixture.url, 'tools/call', { name: 'test_multiple_content_types' }));
    expect((mixed.content as Json[]).map((block) => block.type)).toEqual(['text', 'image', 'resource']);
    const failed = resultOf(await rpc(fixture.url, 'tools/call', { name: 'test_error_handling' }));
    expect(failed).toMatchObject({ resultType: 'complete', isError: true });
  });

  it('streams progress notifications before the result when a progressToken is given', async () => {
    const res = await rpc(
      fixture.url,
      'tools/call',
      { name: 'test_tool_with_progress' },
      { meta: { progressToken: 'p-1' } },
    );
    expect(res.contentType).toContain('text/event-stream');
    const progress = res.messages.filter((message) => message.method === 'notifications/progress');
    expect(progress.map((message) => (message.params as Json).progress)).toEqual([0, 50, 100]);
    expect(progress.every((message) => (message.params as Json).progressToken === 'p-1')).toBe(true);
    expect(lastMessage(res)).toMatchObject({ id: res.id, result: { resultType: 'complete' } });
  });

  it('answers plain JSON without notifications when no progressToken is given', async () => {
    const res = await rpc(fixture.url, 'tools/call', { name: 'test_tool_with_progress' });
    expect(res.contentType).toContain('application/json');
    expect(res.messages).toHaveLength(1);
  });

  it('sends log messages only when the request sets a log level', async () => {
    const quiet = await rpc(fixture.url, 'tools/call', { name: 'test_logging_tool' });
    expect(quiet.messages.filter((message) => message.method === 'notifications/message')).toEqual([]);
    const chatty = await rpc(
      fixture.url,
      'tools/call',
      { name: 'test_logging_tool' },
      { meta: { [META.logLevel]: 'debug' } },
    );
    expect(chatty.messages.filter((message) => message.method === 'notifications/message')).toHaveLength(3);
    const errorsOnly = await rpc(
      fixture.url,
      'tools/call',
      { name: 'test_logging_tool' },
      { meta: { [META.logLevel]: 'error' } },
    );
    expect(errorsOnly.messages.filter((message) => message.method === 'notifications/message')).toEqual([]);
  });

  it('test_missing_capability needs sampling: -32021 + 400 naming it', async () => {
    const res = await rpc(fixture.url, 'tools/call', { name: 'test_missing_capability' }, { caps: {} });
    expect(res.status).toBe(400);
    expect(errorOf(res)).toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: {} } } });
    expect(
      resultOf(await rpc(fixture.url, 'tools/call', { name: 'test_missing_capability' })).resultType,
    ).toBe('complete');
  });

  describe('x-mcp-header tool (Mcp-Param-* validation)', () => {
    const name = 'test_custom_headers';
    const call = (args: Json, headers: Record<string, string>) =>
      rpc(fixture.url, 'tools/call', { name, arguments: args }, { headers });

    it('accepts matching plain, base64 and numeric headers', async () => {
      expect(
        resultOf(await call({ region: 'us-west1' }, { 'mcp-param-region': 'us-west1' })).resultType,
      ).toBe('complete');
      const encoded = `=?base64?${Buffer.from('Hello').toString('base64')}?=`;
      expect(resultOf(await call({ region: 'Hello' }, { 'mcp-param-region': encoded })).resultType).toBe(
        'complete',
      );
      expect(resultOf(await call({ priority: 7 }, { 'mcp-param-priority': '07' })).resultType).toBe(
        'complete',
      );
      // A half-formed sentinel is a literal value.
      const literal = '=?base64?SGVsbG8=';
      expect(resultOf(await call({ region: literal }, { 'mcp-param-region': literal })).resultType).toBe(
        'complete',
      );
    });

    it.each([
      ['a missing header', { region: 'eu' }, {}],
      ['a mismatched header', { region: 'eu' }, { 'mcp-param-region': 'us' }],
      ['unpadded base64', { region: 'Hello' }, { 'mcp-param-region': '=?base64?SGVsbG8?=' }],
      ['non-alphabet base64', { region: 'Hello' }, { 'mcp-param-region': '=?base64?SGVs!!!bG8=?=' }],
      ['a header without its argument', {}, { 'mcp-param-region': 'eu' }],
    ])('rejects %s with -32020 and HTTP 400', async (_case, args, headers) => {
      const res = await call(args, headers);
      expect(res.status).toBe(400);
      expect(errorOf(res).code).toBe(-32020);
    });

    it('lists json_schema_2020_12_tool with its 2020-12 keywords intact', async () => {
      const tools = resultOf(await rpc(fixture.url, 'tools/list')).tools as Json[];
      const tool = tools.find((t) => t.name === 'json_schema_2020_12_tool');
      expect(tool?.inputSchema).toMatchObject({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        $defs: { address: { $anchor: 'addressDef' } },
        allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
        additionalProperties: false,
      });
    });
  });

  it('rejects a non-localhost Host or Origin (DNS rebinding) and accepts localhost', async () => {
    const port = new URL(fixture.url).port;
    // fetch() drops a custom Host header, so these go through node:http.
    expect(await discoverStatus({ host: 'evil.example.com' })).toBe(403);
    expect(await discoverStatus({ host: `localhost:${port}`, origin: 'http://evil.example.com' })).toBe(403);
    expect(await discoverStatus({ host: `localhost:${port}`, origin: `http://localhost:${port}` })).toBe(200);
    expect(await discoverStatus({ host: `127.0.0.1:${port}` })).toBe(200);
  });

  function discoverStatus(headers: Record<string, string>): Promise<number> {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: nextRequestId(),
      method: 'server/discover',
      params: { _meta: { [META.protocolVersion]: PROTOCOL_VERSION, [META.clientCapabilities]: {} } },
    });
    return new Promise((resolve, reject) => {
      const req = request(
        fixture.url,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': PROTOCOL_VERSION,
            'mcp-method': 'server/discover',
            ...headers,
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  it('serves only the tasks fixtures with conformanceFixtures: false', async () => {
    const tasksOnly = await startExampleUpstream({ conformanceFixtures: false });
    try {
      const res = await rpc(tasksOnly.url, 'resources/list');
      expect(res.status).toBe(404);
      const call = await rpc(tasksOnly.url, 'tools/call', { name: 'test_simple_text' });
      expect(errorOf(call).code).toBe(-32602);
    } finally {
      await tasksOnly.close();
    }
  });
});
