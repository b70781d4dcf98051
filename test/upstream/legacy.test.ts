/**
 * The 2025-era upstream translation's pure parts (task ids, input keys, params, synthesized discovery,
 * refusals) and the probe's verdict on a server that answers `initialize` with a 2024 version.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { META, PROTOCOL_VERSION, TASKS_EXTENSION } from '../../src/protocol';
import { UpstreamClient } from '../../src/upstream/client';
import { refusesEra20260728 } from '../../src/upstream/eras/2025-11-25/refusals';
import { refusal } from '../../src/upstream/eras/2025-11-25/server-requests';
import type { LiveSession } from '../../src/upstream/eras/2025-11-25/sessions';
import { inputKeyOf, parseTaskId, requestIdOf, taskRefOf } from '../../src/upstream/eras/2025-11-25/tasks';
import {
  era20251125Params,
  synthesizedDiscover,
  variantOf,
} from '../../src/upstream/eras/2025-11-25/translate';

const endpoint = { alias: 'old', url: 'http://127.0.0.1:9/mcp' };

describe('task ids and input keys', () => {
  it('name the session a task lives in, and round-trip', () => {
    const session = { variant: 'form', nonce: '0123abcd' } as LiveSession;
    const ref = taskRefOf(session, 'abc.def');
    expect(ref.id).toBe('tr25.form.0123abcd.abc.def');
    expect(parseTaskId(ref.id)).toEqual(ref);
    expect(parseTaskId('trt_other')).toBeUndefined();
    expect(parseTaskId('tr25.weird.n.x')).toBeUndefined();
  });

  it('encode the upstream request id, numbers and strings alike', () => {
    expect(inputKeyOf(0)).toBe('upstream-request-0');
    expect(requestIdOf(inputKeyOf(0))).toBe(0);
    expect(requestIdOf(inputKeyOf('req/1 ü'))).toBe('req/1 ü');
    expect(requestIdOf('confirm')).toBeUndefined();
  });
});

describe('requests and results', () => {
  it('drop the 2026 envelope and MRTR members, keeping vendor _meta keys', () => {
    const params = {
      name: 'echo',
      inputResponses: { a: {} },
      requestState: 's',
      _meta: {
        [META.protocolVersion]: PROTOCOL_VERSION,
        [META.clientCapabilities]: { elicitation: {} },
        [META.clientInfo]: { name: 'c', version: '1' },
        progressToken: 'p1',
        'com.example/trace': 't',
      },
    };
    expect(era20251125Params(params)).toEqual({
      name: 'echo',
      _meta: { progressToken: 'p1', 'com.example/trace': 't' },
    });
    expect(era20251125Params({ name: 'echo', _meta: { [META.protocolVersion]: PROTOCOL_VERSION } })).toEqual({
      name: 'echo',
    });
    expect(variantOf(params)).toBe('form');
    expect(variantOf({ _meta: { [META.clientCapabilities]: { elicitation: { url: {} } } } })).toBe('plain');
  });

  it('synthesize server/discover, with Tasks exactly when tools/call runs as a 2025 task', () => {
    const init = {
      protocolVersion: '2025-11-25',
      capabilities: {
        tools: { listChanged: true },
        prompts: {},
        tasks: { requests: { tools: { call: {} } } },
      },
      serverInfo: { name: 'old', version: '1' },
      instructions: 'be nice',
    };
    expect(synthesizedDiscover(init, endpoint)).toMatchObject({
      resultType: 'complete',
      supportedVersions: [PROTOCOL_VERSION],
      capabilities: { tools: {}, prompts: {}, extensions: { [TASKS_EXTENSION]: {} } },
      instructions: 'be nice',
      cacheScope: 'public',
      _meta: { [META.serverInfo]: { name: 'old', version: '1' } },
    });
    const noTasks = synthesizedDiscover(
      { ...init, capabilities: { tools: {}, tasks: { list: {} } } },
      {
        ...endpoint,
        headers: { authorization: 'Bearer x' },
      },
    );
    expect(noTasks.capabilities).toEqual({ tools: {} });
    expect(noTasks.cacheScope).toBe('private');
  });

  it('tell a 2025-style refusal from an ordinary 2026 error', () => {
    const error = (message: string, code = -32601) =>
      ({ kind: 'error', error: { code, message }, httpStatus: 400 }) as const;
    expect(refusesEra20260728('server/discover', error('Method not found'))).toBe(true);
    expect(refusesEra20260728('tools/list', error('Bad Request: Server not initialized', -32000))).toBe(true);
    expect(refusesEra20260728('tools/list', error('Unsupported protocol version: 2026-07-28', -32000))).toBe(
      true,
    );
    expect(refusesEra20260728('prompts/list', error('Method not found'))).toBe(false);
    expect(refusesEra20260728('tools/list', { kind: 'result', result: {} })).toBe(false);
  });

  it('answer requests the upstream sends mid-call at once', () => {
    expect(refusal({ id: 3, method: 'ping' })).toEqual({ id: 3, result: {} });
    expect(refusal({ id: 4, method: 'elicitation/create' })).toMatchObject({
      id: 4,
      error: { code: -32603, message: expect.stringContaining('cannot relay elicitation/create') },
    });
    expect(refusal({ id: 'r', method: 'sampling/createMessage' })).toMatchObject({
      error: { message: expect.stringContaining('does not offer sampling/createMessage') },
    });
  });
});

test('a server that answers initialize with a 2024 version speaks no era the gateway speaks', async () => {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += String(c)));
    req.on('end', () => {
      const msg = JSON.parse(body || '{}') as { id?: unknown; method?: string };
      res.setHeader('content-type', 'application/json');
      if (msg.method !== 'initialize') {
        res.statusCode = 400;
        res.end(
          JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Bad Request' } }),
        );
        return;
      }
      const result = {
        protocolVersion: '2024-11-05',
        capabilities: {},
        serverInfo: { name: 'old', version: '0' },
      };
      res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = new UpstreamClient();
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    const probe = await client.probe({ alias: 'ancient', url });
    expect(probe).toMatchObject({
      era: null,
      protocolVersion: null,
      error: expect.stringContaining('2024-11-05'),
    });
  } finally {
    await client.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test('an upstream that wants a credential the probe lacks gets no verdict and is probed again on use', async () => {
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    req.resume();
    res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Unauthorized' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = new UpstreamClient();
  try {
    const endpoint = {
      alias: 'locked',
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
      // An operator's upstream: its callers hear the probe's detail (a manager's hear PROBE_FAILED).
      addressApproved: true,
    };
    expect(await client.probe(endpoint)).toMatchObject({
      era: null,
      error: expect.stringContaining('HTTP 401'),
    });
    expect(requests).toBe(1);
    const meta = { [META.protocolVersion]: PROTOCOL_VERSION, [META.clientCapabilities]: {} };
    await expect(client.send(endpoint, 'tools/list', { _meta: meta })).rejects.toThrow(/credential/);
    expect(requests).toBe(2);
  } finally {
    await client.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
