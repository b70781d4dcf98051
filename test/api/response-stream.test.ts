/**
 * A stream to a client over a real HTTP connection whose client stops reading (issue 22, finding 1): the
 * stream writes only while the socket takes it, coalesces what waits, lets a producer wait for room,
 * ends past its bound with StreamOverflow, and ends with the final message only after what waited.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer, request } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { ResponseStream } from '../../src/api/mcp/response-stream';
import { DEFAULT_STREAMS } from '../../src/config/streams';
import { readSseMessages } from '../../src/upstream/http';

let server: Server;
let url: string;
let onRequest: (res: ServerResponse) => void = () => {};

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    onRequest(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

/** A client that reads the response head and then nothing, until `read()`. */
async function pausedClient(): Promise<{ read(): Promise<Array<Record<string, unknown>>>; close(): void }> {
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { accept: 'text/event-stream' } }, resolve);
    req.on('error', reject);
    req.end('{}');
  });
  res.pause();
  return {
    async read() {
      const messages: Array<Record<string, unknown>> = [];
      await readSseMessages(res as unknown as AsyncIterable<Buffer>, (m) => {
        messages.push(m);
      });
      return messages;
    },
    close: () => res.destroy(),
  };
}

/** The server side of the next request, streaming. */
function nextStream(limits = DEFAULT_STREAMS, extra: { onOverflow?: () => void } = {}) {
  return new Promise<{ stream: ResponseStream; res: ServerResponse }>((resolve) => {
    onRequest = (res) => {
      const stream = new ResponseStream(res, true, { limits, requestId: () => 'r1', ...extra });
      stream.start();
      resolve({ stream, res });
    };
  });
}

const log = (n: number, size = 60_000) => ({
  jsonrpc: '2.0',
  method: 'notifications/message',
  params: { level: 'info', data: `${n}:${'x'.repeat(size)}` },
});
const progress = (n: number) => ({
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: { progressToken: 'p', progress: n },
});

/**
 * Writes events until the socket answers false and stays full (the kernel's buffers grow for a while
 * after the first false): from then on the stream queues.
 */
async function fill(res: ServerResponse, notify: (n: number) => void): Promise<number> {
  let n = 0;
  for (;;) {
    while (!res.writableNeedDrain) notify(n++);
    const drained = await Promise.race([
      once(res, 'drain').then(() => true),
      new Promise((r) => setTimeout(r, 300)).then(() => false),
    ]);
    if (!drained) return n;
  }
}

const tick = () => new Promise((r) => setTimeout(r, 50));

test('a producer waits for room while the client does not read, and every event arrives in order', async () => {
  const serving = nextStream();
  const client = await pausedClient();
  const { stream, res } = await serving;
  const written = await fill(res, (n) => stream.notify(log(n)));
  stream.notify(log(written)); // queued
  let room = false;
  const waiting = stream.whenWritable().then(() => (room = true));
  await tick();
  expect(room).toBe(false);
  const reading = client.read();
  await waiting;
  stream.finish({ jsonrpc: '2.0', id: 'r1', result: { done: true } });
  const messages = await reading;
  const numbers = messages
    .slice(0, -1)
    .map((m) => Number(String((m.params as { data: string }).data).split(':')[0]));
  expect(numbers).toEqual([...Array(written + 1).keys()]);
  expect(messages.at(-1)).toEqual({ jsonrpc: '2.0', id: 'r1', result: { done: true } });
});

test('progress of one token coalesces to the latest while the socket is full; the final message comes last', async () => {
  const serving = nextStream();
  const client = await pausedClient();
  const { stream, res } = await serving;
  const written = await fill(res, (n) => stream.notify(log(n)));
  for (let n = 1; n <= 1000; n++) stream.notify(progress(n));
  stream.notify(log(-1, 10));
  stream.finish({ jsonrpc: '2.0', id: 'r1', result: {} });
  const messages = await client.read();
  // Everything written before the socket was full, then the latest progress (superseding each earlier
  // one, it went last each time), the log message sent after it, and the end.
  expect(messages).toHaveLength(written + 3);
  expect(messages.slice(written).map((m) => m.method ?? 'final')).toEqual([
    'notifications/progress',
    'notifications/message',
    'final',
  ]);
  expect(messages[written]?.params).toEqual({ progressToken: 'p', progress: 1000 });
});

test('past its bound the stream ends with StreamOverflow as its last event, and producers stop waiting', async () => {
  let overflowed = 0;
  const limits = { ...DEFAULT_STREAMS, maxQueuedBytes: 200_000 };
  const serving = nextStream(limits, { onOverflow: () => overflowed++ });
  const client = await pausedClient();
  const { stream, res } = await serving;
  const written = await fill(res, (n) => stream.notify(log(n)));
  const waiting = stream.whenWritable();
  // 60 KB each: the fourth waiting one passes 200 000 bytes.
  for (let n = 0; n < 4; n++) stream.notify(log(written + n));
  expect(overflowed).toBe(1);
  await waiting;
  expect(stream.canStream).toBe(false);
  stream.notify(log(-1)); // dropped: the stream has ended
  stream.finish({ jsonrpc: '2.0', id: 'r1', result: {} }); // too: the overflow was the end
  const messages = await client.read();
  expect(messages).toHaveLength(written + 1);
  expect(messages.at(-1)).toEqual({
    jsonrpc: '2.0',
    id: 'r1',
    error: {
      code: -31016,
      message: expect.stringMatching(/did not read/),
      data: { limitBytes: 200_000 },
    },
  });
});

test('a relayed notification over the bound is dropped; a long progress message is cut', async () => {
  const warnings: unknown[] = [];
  const logger = { warn: (...args: unknown[]) => warnings.push(args) } as never;
  const serving = new Promise<ResponseStream>((resolve) => {
    onRequest = (res) => {
      const stream = new ResponseStream(res, true, { logger, project: () => 'demo' });
      stream.start(); // the client waits for the head
      resolve(stream);
    };
  });
  const client = await pausedClient();
  const stream = await serving;
  stream.relay(log(1, 70_000));
  stream.relay(log(2, 70_000));
  stream.relay({ ...progress(1), params: { progressToken: 'p', progress: 1, message: 'm'.repeat(5000) } });
  stream.finish({ jsonrpc: '2.0', id: 'r1', result: {} });
  const messages = await client.read();
  expect(messages.map((m) => m.method ?? 'final')).toEqual(['notifications/progress', 'final']);
  expect((messages[0]?.params as { message: string }).message).toHaveLength(1024);
  // Logged once per request, without the payload.
  expect(warnings).toHaveLength(1);
  expect(JSON.stringify(warnings)).not.toContain('xxxx');
});

test('a producer waiting for room is released when the client goes away', async () => {
  const serving = nextStream();
  const client = await pausedClient();
  const { stream, res } = await serving;
  await fill(res, (n) => stream.notify(log(n)));
  const waiting = stream.whenWritable();
  client.close();
  await waiting;
  expect(stream.canStream).toBe(false);
});
