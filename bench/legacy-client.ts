/**
 * A bare 2025-11-25 Streamable HTTP client for the benchmarks, the same code toward the gateway and
 * toward a 2025-era upstream: `initialize` (no 2026 envelope), the `Mcp-Session-Id` it is given and
 * `notifications/initialized`, then one JSON-RPC request per POST with `Mcp-Session-Id` and
 * `MCP-Protocol-Version: 2025-11-25`. Answers may be JSON or SSE (the SDK's stateful servers answer as
 * SSE); an SSE answer is read to its end, its JSON-RPC response picked by id.
 */
import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { request } from 'undici';
import type { RpcReply } from './support';

export const LEGACY_VERSION = '2025-11-25';

interface JsonRpcMessage {
  id?: unknown;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

/** The JSON-RPC response with `id` in an SSE body (`data:` lines of each event joined). */
function fromSse(text: string, id: string): JsonRpcMessage | undefined {
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trimStart())
      .join('\n');
    if (!data) continue;
    const m = JSON.parse(data) as JsonRpcMessage;
    if (m.id === id) return m;
  }
  return undefined;
}

export class LegacyHttpClient {
  private sessionId: string | undefined;
  private readonly auth: Record<string, string>;

  constructor(
    readonly url: string,
    private readonly dispatcher: Dispatcher,
    opts: { token?: string } = {},
  ) {
    this.auth = opts.token === undefined ? {} : { authorization: `Bearer ${opts.token}` };
  }

  private headers(): Record<string, string> {
    return {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...this.auth,
      ...(this.sessionId !== undefined && {
        'mcp-session-id': this.sessionId,
        'mcp-protocol-version': LEGACY_VERSION,
      }),
    };
  }

  /** `initialize` and `notifications/initialized`; the session id (if the server gave one) is kept. */
  async connect(): Promise<Record<string, unknown>> {
    const id = randomUUID();
    const res = await request(this.url, {
      method: 'POST',
      headers: this.headers(),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'initialize',
        params: {
          protocolVersion: LEGACY_VERSION,
          capabilities: {},
          clientInfo: { name: 'taskrouter-bench-2025', version: '1.0.0' },
        },
      }),
      dispatcher: this.dispatcher,
    });
    const reply = await this.read(res, id);
    if (!reply.result) throw new Error(`initialize: HTTP ${reply.status} ${JSON.stringify(reply.error)}`);
    const sid = res.headers['mcp-session-id'];
    if (typeof sid === 'string') this.sessionId = sid;
    const note = await request(this.url, {
      method: 'POST',
      headers: this.headers(),
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      dispatcher: this.dispatcher,
    });
    await note.body.text();
    if (note.statusCode >= 300) throw new Error(`notifications/initialized: HTTP ${note.statusCode}`);
    return reply.result;
  }

  private async read(res: Dispatcher.ResponseData, id: string): Promise<RpcReply> {
    const text = await res.body.text();
    const sse = String(res.headers['content-type'] ?? '').startsWith('text/event-stream');
    const m = sse ? fromSse(text, id) : text ? (JSON.parse(text) as JsonRpcMessage) : undefined;
    return {
      status: res.statusCode,
      ...(m?.result !== undefined && { result: m.result }),
      ...(m?.error !== undefined && { error: m.error }),
    };
  }

  async request(method: string, params: Record<string, unknown>): Promise<RpcReply> {
    const id = randomUUID();
    const res = await request(this.url, {
      method: 'POST',
      headers: this.headers(),
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
      dispatcher: this.dispatcher,
    });
    return this.read(res, id);
  }

  callTool(name: string, args: Record<string, unknown>): Promise<RpcReply> {
    return this.request('tools/call', { name, arguments: args });
  }
}
