/**
 * Slow clients cannot hold sockets (issue "protocol completeness and hostile input", server timeouts): a
 * request head or body trickled a byte at a time, a connection that says nothing, and a kept-alive
 * connection left idle are all closed within the configured times, while long responses (a listen
 * stream, a slow tool answer) stream on. The timeouts are small here so the test stays fast.
 */
import { connect, type Socket } from 'node:net';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { META, PROTOCOL_VERSION } from '../../src/protocol';

const HEADERS_MS = 400;
const REQUEST_MS = 900;
const KEEP_ALIVE_MS = 300;
/** Node's own margin after the announced keep-alive timeout. */
const NODE_KEEP_ALIVE_MARGIN_MS = 1000;
/** Node checks deadlines on an interval (a quarter of the shorter timeout here) and the OS needs a moment. */
const SLACK_MS = 700;

let gw: TestGateway;
let port: number;
beforeAll(async () => {
  gw = await startTestGateway({
    config: {
      http: {
        host: '127.0.0.1',
        port: 0,
        headersTimeoutMs: HEADERS_MS,
        requestTimeoutMs: REQUEST_MS,
        keepAliveTimeoutMs: KEEP_ALIVE_MS,
      },
    },
  });
  port = Number(new URL(gw.client.url).port);
});
afterAll(async () => {
  await gw?.close();
});

interface Conn {
  socket: Socket;
  received: () => string;
  /** Resolves with the time the server closed the connection, measured from `opened`. */
  closed: Promise<number>;
  opened: number;
}

async function open(): Promise<Conn> {
  const socket = connect({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const opened = Date.now();
  let data = '';
  socket.on('data', (chunk: Buffer) => (data += chunk.toString('utf8')));
  socket.on('error', () => {});
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - opened)));
  return { socket, received: () => data, closed, opened };
}

/** Writes `text` one byte every `everyMs` until the socket closes or the text is out. */
async function trickle(conn: Conn, text: string, everyMs = 100): Promise<void> {
  for (const ch of text) {
    if (conn.socket.destroyed || conn.socket.writableEnded) return;
    conn.socket.write(ch);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

const envelope = { [META.protocolVersion]: PROTOCOL_VERSION, [META.clientCapabilities]: {} };
const path = () => new URL(gw.client.url).pathname;

function head(method: string, bodyLength: number, extra = ''): string {
  return (
    `POST ${path()} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
    `Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: ${PROTOCOL_VERSION}\r\n` +
    `Mcp-Method: ${method}\r\nContent-Length: ${bodyLength}\r\n${extra}\r\n`
  );
}

function body(method: string, params: Record<string, unknown> = {}): string {
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: envelope } });
}

test('a request head trickled a byte at a time is cut off at the header timeout', async () => {
  const conn = await open();
  // 60 bytes a second would take many seconds to finish this head.
  void trickle(conn, head('tools/list', 100) + 'x'.repeat(500), 15);
  const closedAfter = await conn.closed;
  expect(closedAfter).toBeGreaterThanOrEqual(HEADERS_MS - 50);
  expect(closedAfter).toBeLessThan(HEADERS_MS + SLACK_MS);
});

test('a connection that sends nothing is closed at the header timeout', async () => {
  const conn = await open();
  const closedAfter = await conn.closed;
  expect(closedAfter).toBeLessThan(HEADERS_MS + SLACK_MS);
});

test('a body trickled a byte at a time is cut off at the request timeout (408), not read forever', async () => {
  const conn = await open();
  const text = body('tools/list');
  conn.socket.write(head('tools/list', text.length));
  void trickle(conn, text, 50);
  const closedAfter = await conn.closed;
  expect(closedAfter).toBeLessThan(REQUEST_MS + SLACK_MS);
  expect(closedAfter).toBeGreaterThanOrEqual(REQUEST_MS - 50);
  expect(conn.received()).toMatch(/^HTTP\/1\.1 408/);
});

test('an idle kept-alive connection is closed at the keep-alive timeout', async () => {
  const conn = await open();
  const text = body('tools/list');
  conn.socket.write(head('tools/list', text.length) + text);
  const answeredAt = await new Promise<number>((resolve) => {
    const check = () => (conn.received().includes('"result"') ? resolve(Date.now()) : setTimeout(check, 10));
    check();
  });
  expect(conn.received()).toMatch(/^HTTP\/1\.1 200/);
  await conn.closed;
  // Node closes one second after the timeout it announces (\`Keep-Alive: timeout=…\`), so a client that
  // honours the announcement always closes first and never sends on a closing connection.
  const idleFor = Date.now() - answeredAt;
  expect(idleFor).toBeGreaterThanOrEqual(KEEP_ALIVE_MS);
  expect(idleFor).toBeLessThan(KEEP_ALIVE_MS + NODE_KEEP_ALIVE_MARGIN_MS + SLACK_MS);
});

test('responses are not requests: a slow answer and a listen stream outlive every timeout', async () => {
  const slowest = REQUEST_MS + KEEP_ALIVE_MS + 600;
  // A tool that answers after longer than the request timeout (ordinary path: no Tasks declared).
  const slow = await gw.client.callTool(
    'slow_compute',
    { seconds: slowest / 1000, label: 'slow' },
    { tasks: false },
  );
  expect(slow.status).toBe(200);
  expect(slow.body.result?.resultType).toBe('complete');

  const conn = await open();
  const text = body('subscriptions/listen');
  conn.socket.write(head('subscriptions/listen', text.length) + text);
  await new Promise((r) => setTimeout(r, slowest));
  expect(conn.socket.destroyed).toBe(false);
  expect(conn.received()).toMatch(/^HTTP\/1\.1 200/);
  expect(conn.received()).toContain('notifications/subscriptions/acknowledged');
  conn.socket.destroy();
});

test('after all that, the gateway still answers', async () => {
  const reply = await gw.client.request('tools/list', {}, { tasks: false });
  expect(reply.status).toBe(200);
});
