/**
 * The example upstream's conformance fixtures (the suite's "everything server" set) over real HTTP:
 * content tools, progress and log notifications on the response stream, MRTR tools, resources, prompts,
 * completion, subscriptions/listen and the DNS-rebinding guard. test/conformance runs the suite itself.
 */
import { request } from 'node:http';
import type { ExampleUpstream } from '../../examples/upstream/server';
import { startExampleUpstream } from '../../examples/upstream/server';
import { META, PROTOCOL_VERSION, encodeHeaderValue, nameFieldFor } from '../../src/protocol';

type Json = Record<string, unknown>;

const ALL_CAPS = { elicitation: {}, sampling: {}, roots: {} };

interface Response {
  status: number;
  contentType: string;
  /** Every JSON-RPC message received: SSE events in order, or the one JSON body. */
  messages: Json[];
}

let nextId = 1;

async function rpc(
  url: string,
  method: string,
  params: Json = {},
  opts: { caps?: Json; meta?: Json; headers?: Record<string, string> } = {},
): Promise<Response & { id: number }> {
  const id = nextId++;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': PROTOCOL_VERSION,
    'mcp-method': method,
    ...opts.headers,
  };
  const field = nameFieldFor(method);
  const name = field === undefined ? undefined : params[field];
  if (typeof name === 'string') headers['mcp-name'] = encodeHeaderValue(name);
  const _meta = {
    [META.protocolVersion]: PROTOCOL_VERSION,
    [META.clientCapabilities]: opts.caps ?? ALL_CAPS,
    ...opts.meta,
  };
  const res = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta } }),
  });
  const contentType = res.headers.get('content-type') ?? '';
  const text = await res.text();
  const messages = contentType.includes('text/event-stream')
    ? text
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => JSON.parse(line.slice(5)) as Json)
    : text === ''
      ? []
      : [JSON.parse(text) as Json];
  return { id, status: res.status, contentType, messages };
}

function lastMessage(res: Response): Json {
  const last = res.messages[res.messages.length - 1];
  if (!last) throw new Error('no message');
  return last;
}

function resultOf(res: Response): Json {
  const body = lastMessage(res);
  if (body.error !== undefined) throw new Error(`unexpected error: ${JSON.stringify(body.error)}`);
  return body.result as Json;
}

function errorOf(res: Response): { code: number; message: string; data?: Json } {
  return lastMessage(res).error as { code: number; message: string; data?: Json };
}

const accept = (content: Json) => ({ action: 'accept', content });

describe('example upstream conformance fixtures', () => {
  let upstream: ExampleUpstream;
  let url: string;

  beforeAll(async () => {
    upstream = await startExampleUpstream({ name: 'fixtures-test' });
    url = upstream.url;
  });

  afterAll(async () => {
    await upstream.close();
  });

  it('advertises prompts, resources, completions and list-changed in server/discover', async () => {
    const result = resultOf(await rpc(url, 'server/discover'));
    expect(result.capabilities).toMatchObject({
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { subscribe: true },
      completions: {},
    });
  });

  it('lists the tasks tools first, then the everything-server tools', async () => {
    const names = (resultOf(await rpc(url, 'tools/list')).tools as Json[]).map((tool) => tool.name);
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
    const result = resultOf(await rpc(url, 'tools/call', { name, arguments: {} }));
    expect(result.resultType).toBe('complete');
    expect(result.content).toEqual([expect.objectContaining(block)]);
  });

  it('test_audio_content is a decodable RIFF/WAVE clip', async () => {
    const result = resultOf(await rpc(url, 'tools/call', { name: 'test_audio_content' }));
    const data = Buffer.from(((result.content as Json[])[0] as { data: string }).data, 'base64');
    expect(data.subarray(0, 4).toString('ascii')).toBe('RIFF');
    expect(data.subarray(8, 12).toString('ascii')).toBe('WAVE');
  });

  it('test_multiple_content_types mixes text, image and resource; test_error_handling sets isError', async () => {
    const mixed = resultOf(await rpc(url, 'tools/call', { name: 'test_multiple_content_types' }));
    expect((mixed.content as Json[]).map((block) => block.type)).toEqual(['text', 'image', 'resource']);
    const failed = resultOf(await rpc(url, 'tools/call', { name: 'test_error_handling' }));
    expect(failed).toMatchObject({ resultType: 'complete', isError: true });
  });

  it('streams progress notifications before the result when a progressToken is given', async () => {
    const res = await rpc(
      url,
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
    const res = await rpc(url, 'tools/call', { name: 'test_tool_with_progress' });
    expect(res.contentType).toContain('application/json');
    expect(res.messages).toHaveLength(1);
  });

  it('sends log messages only when the request sets a log level', async () => {
    const quiet = await rpc(url, 'tools/call', { name: 'test_logging_tool' });
    expect(quiet.messages.filter((message) => message.method === 'notifications/message')).toEqual([]);
    const chatty = await rpc(
      url,
      'tools/call',
      { name: 'test_logging_tool' },
      { meta: { [META.logLevel]: 'debug' } },
    );
    expect(chatty.messages.filter((message) => message.method === 'notifications/message')).toHaveLength(3);
    const errorsOnly = await rpc(
      url,
      'tools/call',
      { name: 'test_logging_tool' },
      { meta: { [META.logLevel]: 'error' } },
    );
    expect(errorsOnly.messages.filter((message) => message.method === 'notifications/message')).toEqual([]);
  });

  it('test_missing_capability needs sampling: -32021 + 400 naming it', async () => {
    const res = await rpc(url, 'tools/call', { name: 'test_missing_capability' }, { caps: {} });
    expect(res.status).toBe(400);
    expect(errorOf(res)).toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: {} } } });
    expect(resultOf(await rpc(url, 'tools/call', { name: 'test_missing_capability' })).resultType).toBe(
      'complete',
    );
  });

  describe('x-mcp-header tool (Mcp-Param-* validation)', () => {
    const name = 'test_custom_headers';
    const call = (args: Json, headers: Record<string, string>) =>
      rpc(url, 'tools/call', { name, arguments: args }, { headers });

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
      const tools = resultOf(await rpc(url, 'tools/list')).tools as Json[];
      const tool = tools.find((t) => t.name === 'json_schema_2020_12_tool');
      expect(tool?.inputSchema).toMatchObject({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        $defs: { address: { $anchor: 'addressDef' } },
        allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
        additionalProperties: false,
      });
    });
  });

  describe('MRTR tools', () => {
    it('elicitation: round 1 asks for user_name, the retry greets', async () => {
      const name = 'test_input_required_result_elicitation';
      const round1 = resultOf(await rpc(url, 'tools/call', { name }));
      expect(round1).toMatchObject({
        resultType: 'input_required',
        inputRequests: { user_name: { method: 'elicitation/create' } },
      });
      const round2 = resultOf(
        await rpc(url, 'tools/call', {
          name,
          inputResponses: { user_name: accept({ name: 'Alice' }) },
          requestState: round1.requestState,
        }),
      );
      expect(round2).toMatchObject({
        resultType: 'complete',
        content: [{ type: 'text', text: 'Hello, Alice!' }],
      });
    });

    it('sampling and roots answers are accepted by shape', async () => {
      const sampling = resultOf(
        await rpc(url, 'tools/call', {
          name: 'test_input_required_result_sampling',
          inputResponses: {
            capital_question: { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'm' },
          },
        }),
      );
      expect(sampling).toMatchObject({
        resultType: 'complete',
        content: [{ text: 'Sampling response: Paris' }],
      });
      const roots = resultOf(
        await rpc(url, 'tools/call', {
          name: 'test_input_required_result_list_roots',
          inputResponses: { client_roots: { roots: [{ uri: 'file:///r' }] } },
        }),
      );
      expect(roots).toMatchObject({ resultType: 'complete', content: [{ text: 'Client roots: file:///r' }] });
    });

    it('re-requests a missing key instead of failing', async () => {
      const result = resultOf(
        await rpc(url, 'tools/call', {
          name: 'test_input_required_result_elicitation',
          inputResponses: { wrong_key: accept({ data: 'x' }) },
        }),
      );
      expect(result).toMatchObject({ resultType: 'input_required', inputRequests: { user_name: {} } });
    });

    it('multi-round: step1, then step2 with a new requestState, then complete', async () => {
      const name = 'test_input_required_result_multi_round';
      const r1 = resultOf(await rpc(url, 'tools/call', { name }));
      expect(Object.keys(r1.inputRequests as Json)).toEqual(['step1']);
      const r2 = resultOf(
        await rpc(url, 'tools/call', {
          name,
          inputResponses: { step1: accept({ name: 'Alice' }) },
          requestState: r1.requestState,
        }),
      );
      expect(Object.keys(r2.inputRequests as Json)).toEqual(['step2']);
      expect(r2.requestState).not.toBe(r1.requestState);
      const r3 = resultOf(
        await rpc(url, 'tools/call', {
          name,
          inputResponses: { step2: accept({ color: 'blue' }) },
          requestState: r2.requestState,
        }),
      );
      expect(r3).toMatchObject({ resultType: 'complete', content: [{ text: 'Alice likes blue' }] });
    });

    it('request-state: answers count only with the echoed state', async () => {
      const name = 'test_input_required_result_request_state';
      const r1 = resultOf(await rpc(url, 'tools/call', { name }));
      const withoutState = resultOf(
        await rpc(url, 'tools/call', { name, inputResponses: { confirm: accept({ ok: true }) } }),
      );
      expect(withoutState.resultType).toBe('input_required');
      const withState = resultOf(
        await rpc(url, 'tools/call', {
          name,
          inputResponses: { confirm: accept({ ok: true }) },
          requestState: r1.requestState,
        }),
      );
      expect(JSON.stringify(withState.content)).toContain('state-ok');
    });

    it('rejects a tampered requestState with -32602', async () => {
      const name = 'test_input_required_result_tampered_state';
      const r1 = resultOf(await rpc(url, 'tools/call', { name }));
      const res = await rpc(url, 'tools/call', {
        name,
        inputResponses: { confirm: accept({ ok: true }) },
        requestState: `${String(r1.requestState)}-TAMPERED`,
      });
      expect(errorOf(res).code).toBe(-32602);
    });

    it('multiple inputs and capabilities: only request kinds the client declared', async () => {
      const all = resultOf(
        await rpc(url, 'tools/call', { name: 'test_input_required_result_multiple_inputs' }),
      );
      expect(Object.keys(all.inputRequests as Json).sort()).toEqual([
        'client_roots',
        'greeting',
        'user_name',
      ]);
      const samplingOnly = resultOf(
        await rpc(
          url,
          'tools/call',
          { name: 'test_input_required_result_capabilities' },
          { caps: { sampling: {} } },
        ),
      );
      expect(Object.values(samplingOnly.inputRequests as Record<string, Json>).map((r) => r.method)).toEqual([
        'sampling/createMessage',
      ]);
      const none = await rpc(
        url,
        'tools/call',
        { name: 'test_input_required_result_elicitation' },
        { caps: {} },
      );
      expect(errorOf(none)).toMatchObject({
        code: -32021,
        data: { requiredCapabilities: { elicitation: {} } },
      });
    });
  });

  describe('resources', () => {
    it('lists resources and templates with cache hints', async () => {
      const list = resultOf(await rpc(url, 'resources/list'));
      expect(list).toMatchObject({ resultType: 'complete', ttlMs: 60_000, cacheScope: 'public' });
      expect((list.resources as Json[]).map((r) => r.uri)).toEqual([
        'test://static-text',
        'test://static-binary',
      ]);
      const templates = resultOf(await rpc(url, 'resources/templates/list'));
      expect(templates).toMatchObject({
        resourceTemplates: [{ uriTemplate: 'test://template/{id}/data' }],
        ttlMs: 60_000,
        cacheScope: 'public',
      });
    });

    it('reads text, binary and templated resources', async () => {
      const text = resultOf(await rpc(url, 'resources/read', { uri: 'test://static-text' }));
      expect(text).toMatchObject({
        resultType: 'complete',
        contents: [{ uri: 'test://static-text', mimeType: 'text/plain', text: expect.any(String) }],
        ttlMs: 60_000,
        cacheScope: 'public',
      });
      const binary = resultOf(await rpc(url, 'resources/read', { uri: 'test://static-binary' }));
      expect(binary.contents).toEqual([
        expect.objectContaining({ mimeType: 'image/png', blob: expect.any(String) }),
      ]);
      const templated = resultOf(await rpc(url, 'resources/read', { uri: 'test://template/123/data' }));
      const contents = (templated.contents as Json[])[0] as { text: string };
      expect(JSON.parse(contents.text)).toEqual({ id: '123', templateTest: true, data: 'Data for ID: 123' });
    });

    it('answers an unknown URI with -32602 naming it (SEP-2164)', async () => {
      const uri = 'test://nope';
      const error = errorOf(await rpc(url, 'resources/read', { uri }));
      expect(error).toMatchObject({ code: -32602, data: { uri } });
    });

    it('keeps resources/subscribe removed (-32601, 404)', async () => {
      const res = await rpc(url, 'resources/subscribe', { uri: 'test://static-text' });
      expect(res.status).toBe(404);
      expect(errorOf(res).code).toBe(-32601);
    });
  });

  describe('prompts and completion', () => {
    it('lists prompts with cache hints', async () => {
      const list = resultOf(await rpc(url, 'prompts/list'));
      expect(list).toMatchObject({ ttlMs: 60_000, cacheScope: 'public' });
      expect((list.prompts as Json[]).map((p) => p.name)).toEqual([
        'test_simple_prompt',
        'test_prompt_with_arguments',
        'test_prompt_with_embedded_resource',
        'test_prompt_with_image',
        'test_input_required_result_prompt',
      ]);
    });

    it('substitutes arguments, embeds resources and images', async () => {
      const args = resultOf(
        await rpc(url, 'prompts/get', {
          name: 'test_prompt_with_arguments',
          arguments: { arg1: 'a', arg2: 'b' },
        }),
      );
      expect(args).toMatchObject({
        resultType: 'complete',
        messages: [
          { role: 'user', content: { type: 'text', text: "Prompt with arguments: arg1='a', arg2='b'" } },
        ],
      });
      const embedded = resultOf(
        await rpc(url, 'prompts/get', {
          name: 'test_prompt_with_embedded_resource',
          arguments: { resourceUri: 'test://example-resource' },
        }),
      );
      expect((embedded.messages as Json[])[0]).toMatchObject({
        content: { type: 'resource', resource: { uri: 'test://example-resource' } },
      });
      const image = resultOf(await rpc(url, 'prompts/get', { name: 'test_prompt_with_image' }));
      expect((image.messages as Json[])[0]).toMatchObject({
        content: { type: 'image', mimeType: 'image/png' },
      });
    });

    it('rejects missing required arguments and unknown prompts with -32602', async () => {
      expect(errorOf(await rpc(url, 'prompts/get', { name: 'test_prompt_with_arguments' })).code).toBe(
        -32602,
      );
      expect(errorOf(await rpc(url, 'prompts/get', { name: 'nope' })).code).toBe(-32602);
    });

    it('runs MRTR on prompts/get', async () => {
      const name = 'test_input_required_result_prompt';
      const r1 = resultOf(await rpc(url, 'prompts/get', { name }));
      expect(r1).toMatchObject({ resultType: 'input_required', inputRequests: { user_context: {} } });
      const r2 = resultOf(
        await rpc(url, 'prompts/get', {
          name,
          inputResponses: { user_context: accept({ context: 'ctx' }) },
          requestState: r1.requestState,
        }),
      );
      expect(r2).toMatchObject({
        resultType: 'complete',
        messages: [{ content: { text: 'Use this context: ctx' } }],
      });
    });

    it('completes prompt arguments by prefix', async () => {
      const result = resultOf(
        await rpc(url, 'completion/complete', {
          ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
          argument: { name: 'arg1', value: 'par' },
        }),
      );
      expect(result).toEqual(
        expect.objectContaining({
          resultType: 'complete',
          completion: { values: ['paris', 'park', 'party'], total: 3, hasMore: false },
        }),
      );
    });
  });

  describe('subscriptions/listen', () => {
    /**
     * Opens a listen stream, runs `during` once the ack arrived, and collects messages for `ms` after
     * `during` is done (not from the open: on a loaded machine its calls alone can take longer).
     */
    async function listen(filter: Json, during: () => Promise<unknown>, ms = 300): Promise<Json[]> {
      const controller = new AbortController();
      const id = nextId++;
      const res = await fetch(url, {
        method: 'POST',
        signal: controller.signal,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': PROTOCOL_VERSION,
          'mcp-method': 'subscriptions/listen',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'subscriptions/listen',
          params: {
            notifications: filter,
            _meta: { [META.protocolVersion]: PROTOCOL_VERSION, [META.clientCapabilities]: {} },
          },
        }),
      });
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      const messages: Json[] = [];
      let buffer = '';
      let triggered = false;
      // Until the ack arrives and `during` has run, only a guard against a stream that never answers.
      let deadline = setTimeout(() => controller.abort(), 30_000);
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          const lines = buffer.split('\n');
          buffer = lines.pop() ?? '';
          for (const line of lines)
            if (line.startsWith('data:')) messages.push(JSON.parse(line.slice(5)) as Json);
          if (!triggered && messages.length > 0) {
            triggered = true;
            await during();
            clearTimeout(deadline);
            deadline = setTimeout(() => controller.abort(), ms);
          }
        }
      } catch (err) {
        if (!controller.signal.aborted) throw err;
      } finally {
        clearTimeout(deadline);
      }
      for (const message of messages) {
        expect((message.params as { _meta: Json })._meta[META.subscriptionId]).toBe(id);
      }
      return messages;
    }

    it('acknowledges the agreed filter first, then relays tools/list_changed', async () => {
      const messages = await listen({ toolsListChanged: true, resourcesListChanged: true }, () =>
        rpc(url, 'tools/call', { name: 'test_trigger_tool_change' }),
      );
      expect(messages[0]).toMatchObject({
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: { toolsListChanged: true } },
      });
      expect((messages[0]?.params as Json).notifications).toEqual({ toolsListChanged: true });
      expect(messages.slice(1).map((m) => m.method)).toEqual(['notifications/tools/list_changed']);
    });

    it('acknowledges only the resources it serves and sends updates only of those', async () => {
      const messages = await listen(
        { resourceSubscriptions: ['test://static-text', 'test://unknown'] },
        async () => {
          // Sent in this order on the stream: had the binary one been sent, it would come first.
          await rpc(url, 'tools/call', {
            name: 'test_update_resource',
            arguments: { uri: 'test://static-binary' },
          });
          await rpc(url, 'tools/call', {
            name: 'test_update_resource',
            arguments: { uri: 'test://static-text' },
          });
        },
      );
      expect((messages[0]?.params as Json).notifications).toEqual({
        resourceSubscriptions: ['test://static-text'],
      });
      expect(messages.slice(1).map((m) => [m.method, (m.params as Json).uri])).toEqual([
        ['notifications/resources/updated', 'test://static-text'],
      ]);
    });

    it('honours the filter: no tools notification on a prompts-only stream', async () => {
      const messages = await listen({ promptsListChanged: true }, async () => {
        await rpc(url, 'tools/call', { name: 'test_trigger_tool_change' });
        await rpc(url, 'tools/call', { name: 'test_trigger_prompt_change' });
      });
      expect(messages.map((m) => m.method)).toEqual([
        'notifications/subscriptions/acknowledged',
        'notifications/prompts/list_changed',
      ]);
    });
  });

  it('rejects a non-localhost Host or Origin (DNS rebinding) and accepts localhost', async () => {
    const port = new URL(url).port;
    // fetch() drops a custom Host header, so these go through node:http.
    expect(await discoverStatus({ host: 'evil.example.com' })).toBe(403);
    expect(await discoverStatus({ host: `localhost:${port}`, origin: 'http://evil.example.com' })).toBe(403);
    expect(await discoverStatus({ host: `localhost:${port}`, origin: `http://localhost:${port}` })).toBe(200);
    expect(await discoverStatus({ host: `127.0.0.1:${port}` })).toBe(200);
  });

  function discoverStatus(headers: Record<string, string>): Promise<number> {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: nextId++,
      method: 'server/discover',
      params: { _meta: { [META.protocolVersion]: PROTOCOL_VERSION, [META.clientCapabilities]: {} } },
    });
    return new Promise((resolve, reject) => {
      const req = request(
        url,
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
