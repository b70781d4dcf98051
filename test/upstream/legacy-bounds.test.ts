/**
 * What a process keeps per 2025-era session is bounded (issue 23's audit of long-lived structures): its
 * copies of sessions, its own session store and the standalone streams it holds open, least recently
 * used pushed out first.
 * Against a real HTTP server speaking the 2025 session protocol (initialize, standalone GET stream,
 * DELETE), with the bounds made small.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { MemorySessionStore } from '../../src/upstream/eras/2025-11-25/memory-store';
import { StandaloneStreams } from '../../src/upstream/eras/2025-11-25/server-requests';
import type { LiveSession } from '../../src/upstream/eras/2025-11-25/sessions';
import { Era20251125Sessions } from '../../src/upstream/eras/2025-11-25/sessions';
import { Era20251125Wire } from '../../src/upstream/eras/2025-11-25/wire';
import { HttpTransport } from '../../src/upstream/transport/http';
import { generousAnswers } from '../helpers/answers';

/** What the upstream saw, by session id. */
const seen = {
  initialized: 0,
  ended: new Set<string>(),
  openStreams: new Set<string>(),
  streamsOpened: 0,
};

function answer(req: IncomingMessage, res: ServerResponse, body: string): void {
  const message = JSON.parse(body) as { id?: number | string; method: string };
  if (message.method === 'initialize') {
    seen.initialized++;
    res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': randomUUID() });
    res.end(
      JSON.stringify({
        jsonrpc: '2.0',
        id: message.id,
        result: {
          protocolVersion: '2025-11-25',
          capabilities: { tools: {} },
          serverInfo: { name: 'old', version: '1' },
        },
      }),
    );
    return;
  }
  res.writeHead(202).end();
}

let server: Server;
let url: string;
const transport = new HttpTransport({
  timeoutMs: 30_000,
  pools: { connections: 16, idleMs: 60_000, maxPools: 10 },
});
const answers = generousAnswers(1 << 20, 10_000);
const wire = new Era20251125Wire(transport, answers);

beforeAll(async () => {
  server = createServer((req, res) => {
    const session = String(req.headers['mcp-session-id'] ?? '');
    if (req.method === 'GET') {
      seen.streamsOpened++;
      seen.openStreams.add(session);
      req.socket.on('close', () => seen.openStreams.delete(session));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': open\n\n');
      return;
    }
    if (req.method === 'DELETE') {
      seen.ended.add(session);
      res.writeHead(200).end();
      return;
    }
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => answer(req, res, body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});
afterAll(async () => {
  server.closeAllConnections();
  await transport.close();
  await new Promise((r) => server.close(r));
});

/** One user's view of the upstream: sessions are per credential scope. */
const endpointOf = (user: number) => ({ alias: 'old', url, cacheKey: `user-${user}` });

async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('a process keeps at most its bound of sessions; one pushed out stays in the store and is not ended by it', async () => {
  const store = new MemorySessionStore();
  const sessions = new Era20251125Sessions(wire, store, { name: 'taskrouter', version: 'test' }, 2);
  const opened: LiveSession[] = [];
  for (const user of [1, 2, 3]) opened.push(await sessions.acquire(endpointOf(user), 'plain'));
  expect(seen.initialized).toBe(3);

  // User 1's copy was pushed out: the next request reads the store's session, no new initialize.
  const again = await sessions.acquire(endpointOf(1), 'plain');
  expect(again.sessionId).toBe(opened[0]?.sessionId);
  expect(seen.initialized).toBe(3);

  // That brought user 1 back and pushed user 2 out: shutdown ends the two it holds, not user 2's.
  await sessions.close((err) => {
    throw err;
  });
  const ids = opened.map((s) => String(s.sessionId));
  expect([...seen.ended].sort()).toEqual([ids[0], ids[2]].sort());
  expect(await store.get(Era20251125Sessions.scopeOf(endpointOf(2), 'plain'))).toMatchObject({
    sessionId: ids[1],
  });
});

test("a process's own session store (stdio upstreams) keeps at most its bound, least recently used forgotten first", async () => {
  const store = new MemorySessionStore(2);
  const record = (nonce: string) => ({
    nonce,
    upstreamId: null,
    url: 'stdio:x',
    protocolVersion: '2025-11-25',
    sessionId: null,
    initialize: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'x', version: '1' } },
  });
  await store.add('a', record('n1'));
  await store.add('b', record('n2'));
  expect(await store.get('a')).toMatchObject({ nonce: 'n1' }); // a is now the most recently used
  await store.add('c', record('n3'));
  expect(await store.get('b')).toBeUndefined();
  expect(await store.get('a')).toMatchObject({ nonce: 'n1' });
  expect(await store.get('c')).toMatchObject({ nonce: 'n3' });
});

test('a process holds at most its bound of standalone streams, closing the least recently used', async () => {
  const store = new MemorySessionStore();
  const sessions = new Era20251125Sessions(wire, store, { name: 'taskrouter', version: 'test' });
  const streams = new StandaloneStreams(wire, 2);
  const users: LiveSession[] = [];
  for (const user of [1, 2, 3]) users.push(await sessions.acquire(endpointOf(user), 'plain'));
  const [one, two, three] = users as [LiveSession, LiveSession, LiveSession];
  const id = (s: LiveSession) => String(s.sessionId);

  await streams.watch(one);
  await streams.watch(two);
  await until('two streams are open', () => seen.openStreams.size === 2);
  await streams.watch(one); // user 1 calls again: now user 2's stream is the least recently used
  await streams.watch(three);
  await until("user 2's stream is closed", () => !seen.openStreams.has(id(two)));
  expect([...seen.openStreams].sort()).toEqual([id(one), id(three)].sort());
  expect(seen.streamsOpened).toBe(3);

  // User 2 calls again: its stream opens again and user 1's (now the oldest) closes.
  await streams.watch(two);
  await until("user 1's stream is closed", () => !seen.openStreams.has(id(one)));
  expect([...seen.openStreams].sort()).toEqual([id(two), id(three)].sort());

  streams.close();
  await until('every stream is closed', () => seen.openStreams.size === 0);
  await sessions.close(() => {});
});
