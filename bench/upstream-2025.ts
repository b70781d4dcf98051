/**
 * A 2025-era upstream as a process of its own, for the benchmarks: the SDK 1.x `McpServer` behind its
 * `StreamableHTTPServerTransport`, as most servers are written today (bench/processes.ts forks it through
 * tsx, with an IPC channel). `stateful` (the default): a session per `initialize`, answers as SSE (the
 * SDK's session-map example); `stateless`: a fresh server per request, JSON answers. Its one tool is the
 * example upstream's `work {ms}` (read-only, waits `ms`, 5 by default), so a 2025 path and the 2026 path
 * call the same work. Options come as JSON in argv[2] (`{ mode }`). Once listening it sends
 * `{ type: 'ready', url, pid }`; it exits when the parent says `{ type: 'close' }` or goes away.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

export type Legacy2025Mode = 'stateful' | 'stateless';

function makeServer(): McpServer {
  const server = new McpServer({ name: 'bench-2025-upstream', version: '1.0.0' });
  let calls = 0;
  server.registerTool(
    'work',
    {
      description: 'Spends about `ms` milliseconds (default 5) and returns; read-only.',
      // `nonce` makes each call's arguments unique (cache misses through the gateway); it is ignored.
      inputSchema: { ms: z.number().min(0).max(60_000).optional(), nonce: z.string().optional() },
      annotations: { readOnlyHint: true },
    },
    async ({ ms }) => {
      const wait = ms ?? 5;
      await new Promise((resolve) => setTimeout(resolve, wait));
      calls++;
      return { content: [{ type: 'text', text: `worked ${wait} ms (call ${calls})` }] };
    },
  );
  return server;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  try {
    return text ? (JSON.parse(text) as unknown) : undefined;
  } catch {
    return undefined;
  }
}

function refuse(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

async function main(): Promise<void> {
  const send = process.send?.bind(process);
  if (!send) throw new Error('bench/upstream-2025.ts runs forked, with an IPC channel');
  const { mode = 'stateful' } = JSON.parse(process.argv[2] ?? '{}') as { mode?: Legacy2025Mode };
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  const stateless = async (req: IncomingMessage, res: ServerResponse, body: unknown) => {
    const server = makeServer();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  // One McpServer per session, as the SDK's example does (a server connects to one transport).
  const stateful = async (req: IncomingMessage, res: ServerResponse, body: unknown) => {
    const sid = req.headers['mcp-session-id'];
    let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (!transport) {
      if (sid !== undefined) return refuse(res, 404, -32001, 'Session not found');
      if (req.method !== 'POST' || !isInitializeRequest(body)) {
        return refuse(res, 400, -32000, 'Bad Request: No valid session ID provided');
      }
      const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, created);
        },
        onsessionclosed: (id) => {
          sessions.delete(id);
        },
      });
      transport = created;
      await makeServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  };

  const http = createServer((req, res) => {
    void (async () => {
      const body = req.method === 'POST' ? await readBody(req) : undefined;
      await (mode === 'stateless' ? stateless : stateful)(req, res, body);
    })().catch(() => {
      if (!res.headersSent) refuse(res, 500, -32603, 'bench upstream failure');
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;

  let closing = false;
  const close = () => {
    if (closing) return;
    closing = true;
    for (const t of sessions.values()) void t.close();
    http.closeAllConnections();
    http.close(() => process.exit(0));
  };
  process.on('message', (m: { type?: string }) => {
    if (m.type === 'close') close();
  });
  process.once('disconnect', close);
  process.once('SIGTERM', close);
  send({ type: 'ready', url: `http://127.0.0.1:${port}/mcp`, pid: process.pid });
}

main().catch((err: unknown) => {
  process.stderr.write(
    `2025 upstream failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
