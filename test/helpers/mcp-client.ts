/** A minimal MCP 2026-07-28 client for tests: real HTTP, headers mirrored as the spec requires. */
import { randomUUID } from 'node:crypto';
import { META, PROTOCOL_VERSION, requestHeaders, TASKS_EXTENSION } from '../../src/protocol';

export interface RpcReply {
  status: number;
  headers: Headers;
  body: {
    jsonrpc: '2.0';
    id: string | number | null;
    result?: Record<string, unknown> & { resultType?: string };
    error?: { code: number; message: string; data?: unknown };
  };
}

export interface RequestOptions {
  /** Declare the Tasks extension (default true). */
  tasks?: boolean;
  capabilities?: Record<string, unknown>;
  /** Header overrides; `null` removes a header. */
  headers?: Record<string, string | null>;
  meta?: Record<string, unknown>;
}

export const TASKS_CAPS = { extensions: { [TASKS_EXTENSION]: {} } };
export const TASKS_AND_FORM_CAPS = { ...TASKS_CAPS, elicitation: { form: {} } };

export class McpTestClient {
  constructor(
    readonly url: string,
    /** Sent with every request (e.g. `authorization`). */
    readonly defaultHeaders: Record<string, string> = {},
  ) {}

  /** The same endpoint, calling with a bearer token. */
  withToken(token: string): McpTestClient {
    return new McpTestClient(this.url, { ...this.defaultHeaders, authorization: `Bearer ${token}` });
  }

  async request(method: string, params: Record<string, unknown> = {}, opts: RequestOptions = {}) {
    const capabilities = opts.capabilities ?? (opts.tasks === false ? {} : TASKS_CAPS);
    const body = {
      jsonrpc: '2.0',
      id: randomUUID(),
      method,
      params: {
        ...params,
        _meta: {
          [META.protocolVersion]: PROTOCOL_VERSION,
          [META.clientCapabilities]: capabilities,
          [META.clientInfo]: { name: 'taskrouter-tests', version: '1.0.0' },
          ...opts.meta,
        },
      },
    };
    const headers: Record<string, string> = {
      ...this.defaultHeaders,
      ...requestHeaders(method, params, PROTOCOL_VERSION),
    };
    for (const [k, v] of Object.entries(opts.headers ?? {})) {
      if (v === null) delete headers[k.toLowerCase()];
      else headers[k.toLowerCase()] = v;
    }
    return this.post(JSON.stringify(body), headers);
  }

  async post(body: string, headers: Record<string, string>): Promise<RpcReply> {
    const res = await fetch(this.url, { method: 'POST', headers, body });
    const text = await res.text();
    return {
      status: res.status,
      headers: res.headers,
      body: text ? (JSON.parse(text) as RpcReply['body']) : (undefined as never),
    };
  }

  callTool(name: string, args: Record<string, unknown> = {}, opts: RequestOptions = {}) {
    return this.request('tools/call', { name, arguments: args }, opts);
  }

  getTask(taskId: string, opts: RequestOptions = {}) {
    return this.request('tasks/get', { taskId }, opts);
  }

  /** Polls tasks/get until the status satisfies `done` (or the time is up). */
  async waitForTask(
    taskId: string,
    done: (status: string, task: Record<string, unknown>) => boolean = (s) =>
      ['completed', 'failed', 'cancelled'].includes(s),
    timeoutMs = 30_000,
  ): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const reply = await this.getTask(taskId);
      const result = reply.body.result;
      if (!result) throw new Error(`tasks/get failed: ${JSON.stringify(reply.body)}`);
      if (done(String(result.status), result)) return result;
      if (Date.now() > deadline) throw new Error(`task still ${String(result.status)} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Records every body and header set `client` receives from now on (to prove what never leaks). */
export function recordReplies(client: McpTestClient): string[] {
  const seen: string[] = [];
  const post = client.post.bind(client);
  client.post = async (body, headers) => {
    const reply = await post(body, headers);
    seen.push(JSON.stringify(reply.body), JSON.stringify([...reply.headers.entries()]));
    return reply;
  };
  return seen;
}

/** The text of a CallToolResult's content blocks, a line each (a block without text gives an empty line). */
export function resultText(result: Record<string, unknown> | undefined): string {
  const content = (result?.content ?? []) as Array<{ text?: string }>;
  return content.map((c) => c.text ?? '').join('\n');
}

/** A JSON-RPC message of an SSE stream. */
export type StreamedMessage = Record<string, unknown> & {
  method?: string;
  id?: unknown;
  params?: { progress?: number };
};

/**
 * tools/call of `name` (request id `id`) asking for progress notifications under `progressToken`, without
 * client capabilities, as one raw POST read to its end: the answer's content type and the JSON-RPC
 * messages of its SSE `data:` lines.
 */
export async function progressToolCall(
  url: string,
  name: string,
  id: number,
  progressToken: string,
): Promise<{ contentType: string | null; messages: StreamedMessage[] }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': PROTOCOL_VERSION,
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {
        name,
        arguments: {},
        _meta: { [META.protocolVersion]: PROTOCOL_VERSION, [META.clientCapabilities]: {}, progressToken },
      },
    }),
  });
  const messages = (await res.text())
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)) as StreamedMessage);
  return { contentType: res.headers.get('content-type'), messages };
}
