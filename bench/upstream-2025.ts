/**
 * A 2025-era upstream as a process of its own, for the benchmarks: the SDK 1.x `McpServer` behind its
 * `StreamableHTTPServerTransport` (test/fixtures/sdk1-host.ts), as most servers are written today (bench/processes.ts forks it through
 * tsx, with an IPC channel). `stateful` (the default): a session per `initialize`, answers as SSE (the
 * SDK's session-map example); `stateless`: a fresh server per request, JSON answers. Its one tool is the
 * example upstream's `work {ms}` (read-only, waits `ms`, 5 by default), so a 2025 path and the 2026 path
 * call the same work. Options come as JSON in argv[2] (`{ mode }`). Once listening it sends
 * `{ type: 'ready', url, pid }`; it exits when the parent says `{ type: 'close' }` or goes away.
 */
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { Sdk1Mode } from '../test/fixtures/sdk1-host';
import { createSdk1Host } from '../test/fixtures/sdk1-host';

export type Legacy2025Mode = Sdk1Mode;

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

async function main(): Promise<void> {
  const send = process.send?.bind(process);
  if (!send) throw new Error('bench/upstream-2025.ts runs forked, with an IPC channel');
  const { mode = 'stateful' } = JSON.parse(process.argv[2] ?? '{}') as { mode?: Legacy2025Mode };
  const { http, sessions } = createSdk1Host({
    mode,
    makeServer,
    failureMessage: 'bench upstream failure',
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
