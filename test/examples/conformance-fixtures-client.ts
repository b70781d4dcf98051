/**
 * What the tests of the example upstream's conformance fixtures (conformance-fixtures-*.test.ts) share:
 * the upstream started once per file, and a JSON-RPC client that keeps every message of an SSE answer
 * (progress and log notifications come before the result).
 */
import type { ExampleUpstream } from '../../examples/upstream/server';
import { startExampleUpstream } from '../../examples/upstream/server';
import { META, PROTOCOL_VERSION, encodeHeaderValue, nameFieldFor } from '../../src/protocol';

export type Json = Record<string, unknown>;

export const ALL_CAPS = { elicitation: {}, sampling: {}, roots: {} };

export interface Response {
  status: number;
  contentType: string;
  /** Every JSON-RPC message received: SSE events in order, or the one JSON body. */
  messages: Json[];
}

let nextId = 1;

/** A JSON-RPC id no other request of this test file has used. */
export function nextRequestId(): number {
  return nextId++;
}

export async function rpc(
  url: string,
  method: string,
  params: Json = {},
  opts: { caps?: Json; meta?: Json; headers?: Record<string, string> } = {},
): Promise<Response & { id: number }> {
  const id = nextRequestId();
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

export function lastMessage(res: Response): Json {
  const last = res.messages[res.messages.length - 1];
  if (!last) throw new Error('no message');
  return last;
}

export function resultOf(res: Response): Json {
  const body = lastMessage(res);
  if (body.error !== undefined) throw new Error(`unexpected error: ${JSON.stringify(body.error)}`);
  return body.result as Json;
}

export function errorOf(res: Response): { code: number; message: string; data?: Json } {
  return lastMessage(res).error as { code: number; message: string; data?: Json };
}

export const accept = (content: Json) => ({ action: 'accept', content });

/** Starts the example upstream (all fixtures) before the file's tests and closes it after them. */
export function fixturesUpstream(): { readonly url: string } {
  let upstream: ExampleUpstream | undefined;
  const fixture = {
    get url(): string {
      if (!upstream) throw new Error('the upstream starts in beforeAll');
      return upstream.url;
    },
  };
  beforeAll(async () => {
    upstream = await startExampleUpstream({ name: 'fixtures-test' });
  });
  afterAll(async () => {
    await upstream?.close();
  });
  return fixture;
}
