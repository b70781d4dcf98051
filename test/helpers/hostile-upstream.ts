/**
 * Hostile parts for the isolation tests (a tenant, an upstream or a client that behaves badly on purpose):
 *
 * - `startHostileUpstream`: a tiny MCP 2026-07-28 server of the test's own (plain node:http) that answers
 *   `server/discover` and `tools/list` correctly and hands every `tools/call` (and anything else) to the
 *   test's handler with the raw response, so the handler can stream without end, drip bytes, send a
 *   huge body or an SSE event without a line end.
 * - `stalledClient`: a raw TCP client that sends one HTTP request and then stops reading its socket.
 * - `rssBytes`: a process's resident set size (from /proc), to bound what an attack costs the gateway.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { PROTOCOL_VERSION, TASKS_EXTENSION } from '../../src/protocol';

export interface HostileRequest {
  id: string | number;
  method: string;
  params: Record<string, unknown>;
}

/** Handles one request the default answers do not cover; it owns `res` (write, stream, never end…). */
export type HostileHandler = (req: IncomingMessage, res: ServerResponse, message: HostileRequest) => void;

export interface HostileUpstreamOptions {
  /** Tools listed by `tools/list` (default: one tool `attack` taking any arguments). */
  tools?: Array<Record<string, unknown>>;
  /** Advertise the Tasks extension in `server/discover` (default false: calls stay ordinary). */
  tasks?: boolean;
  /** More `server/discover` capabilities (e.g. `resources: { subscribe: true }`). */
  capabilities?: Record<string, unknown>;
  /** Handles `tools/call` and any method without a default answer. */
  onRequest: HostileHandler;
}

export interface HostileUpstream {
  url: string;
  server: Server;
  /** Requests seen, by method. */
  seen: Record<string, number>;
  close(): Promise<void>;
}

const SERVER_INFO = { 'io.modelcontextprotocol/serverInfo': { name: 'hostile', version: '1.0.0' } };

export async function startHostileUpstream(opts: HostileUpstreamOptions): Promise<HostileUpstream> {
  const seen: Record<string, number> = {};
  const tools = opts.tools ?? [{ name: 'attack', inputSchema: { type: 'object' } }];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let message: HostileRequest;
      try {
        message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as HostileRequest;
      } catch {
        res.writeHead(400).end();
        return;
      }
      seen[message.method] = (seen[message.method] ?? 0) + 1;
      if (message.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      const answer = (result: Record<string, unknown>) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
      };
      if (message.method === 'server/discover') {
        answer({
          resultType: 'complete',
          supportedVersions: [PROTOCOL_VERSION],
          capabilities: {
            tools: {},
            ...opts.capabilities,
            ...(opts.tasks && { extensions: { [TASKS_EXTENSION]: {} } }),
          },
          ttlMs: 60_000,
          cacheScope: 'public',
          _meta: SERVER_INFO,
        });
        return;
      }
      if (message.method === 'tools/list') {
        answer({ resultType: 'complete', tools, ttlMs: 60_000, cacheScope: 'public', _meta: SERVER_INFO });
        return;
      }
      opts.onRequest(req, res, message);
    });
  });
  // Attack handlers keep responses open; never let one hold the test's shutdown.
  const sockets = new Set<net.Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    server,
    seen,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Writes one SSE event carrying `message` (JSON). Answers whether the socket took it without buffering. */
export function writeSse(res: ServerResponse, message: unknown): boolean {
  return res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
}

export interface StalledClient {
  socket: net.Socket;
  /** Bytes read before the client stopped reading. */
  bytesRead(): number;
  close(): void;
}

/**
 * Sends one HTTP POST over a raw socket, reads at most `readFirst` bytes of the answer, then stops
 * reading for good (the socket stays open): the gateway's writes back up in the kernel buffers and then
 * in the gateway, unless it honours back-pressure.
 */
export async function stalledClient(
  url: string,
  body: string,
  headers: Record<string, string>,
  readFirst = 0,
): Promise<StalledClient> {
  const u = new URL(url);
  const socket = net.connect({ host: u.hostname, port: Number(u.port) });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  socket.on('error', () => {}); // the gateway may cut it: that is an allowed defence
  let read = 0;
  socket.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read >= readFirst) socket.pause();
  });
  if (readFirst === 0) socket.pause();
  const head = [
    `POST ${u.pathname}${u.search} HTTP/1.1`,
    `host: ${u.host}`,
    'content-type: application/json',
    'accept: application/json, text/event-stream',
    `content-length: ${Buffer.byteLength(body)}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    '',
    '',
  ].join('\r\n');
  socket.write(head + body);
  return { socket, bytesRead: () => read, close: () => socket.destroy() };
}

/** Resident set size of a process, in bytes (Linux /proc). */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kb) * 1024;
}
