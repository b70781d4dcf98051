/**
 * The upstream SSE readers stop reading while a notification's relay waits (issue 22, finding 1): an
 * `onNotification` that answers a promise holds the next read, so the upstream's own writes back up
 * (its `res.write()` answers false and it waits for `drain`) until the promise settles; then the rest
 * arrives and the call completes. Both eras' readers, against a real HTTP server.
 */
import type { Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { META, PROTOCOL_VERSION } from '../../src/protocol';
import { Era20251125Wire } from '../../src/upstream/eras/2025-11-25/wire';
import { sendEra20260728 } from '../../src/upstream/eras/2026-07-28';
import { HttpTransport } from '../../src/upstream/transport/http';
import { generousAnswers } from '../helpers/answers';

/** Events the upstream sends before its answer: 64 MB, more than any socket buffer holds. */
const EVENTS = 4000;
const PAD = 'x'.repeat(16 * 1024);

interface Flood {
  /** The upstream's last write answered false and it has not seen `drain` since. */
  paused: boolean;
  written: number;
}

let server: Server;
let url: string;
const flood: Flood = { paused: false, written: 0 };
const transport = new HttpTransport({
  timeoutMs: 300_000,
  pools: { connections: 128, idleMs: 60_000, maxPools: 10 },
});

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const { id } = JSON.parse(body) as { id: string };
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const pump = () => {
        flood.paused = false;
        while (flood.written < EVENTS) {
          flood.written++;
          const event = {
            jsonrpc: '2.0',
            method: 'notifications/message',
            params: { n: flood.written, PAD },
          };
          if (!res.write(`event: message\ndata: ${JSON.stringify(event)}\n\n`)) {
            flood.paused = true;
            res.once('drain', pump);
            return;
          }
        }
        res.end(
          `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { done: true } })}\n\n`,
        );
      };
      pump();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});
afterAll(async () => {
  await transport.close();
  await new Promise((r) => server.close(r));
});

beforeEach(() => {
  flood.paused = false;
  flood.written = 0;
});

/** Waits (up to 30 s) until the upstream is paused and has written nothing more for 500 ms. */
async function upstreamStalled(): Promise<number> {
  const deadline = Date.now() + 30_000;
  let last = -1;
  while (Date.now() < deadline) {
    if (flood.paused && flood.written === last) return last;
    last = flood.paused ? flood.written : -1;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`upstream never stalled: ${JSON.stringify(flood)}`);
}

/** A relay that holds the reader at its first notification until `release()`. */
function gatedRelay() {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const seen: number[] = [];
  const onNotification = (m: Record<string, unknown>) => {
    seen.push(Number((m.params as { n: number }).n));
    return seen.length === 1 ? gate : undefined;
  };
  return { onNotification, release, seen };
}

/** Answers read under generous bounds on the event loop: what is under test here is the pausing. */
const answers = generousAnswers(1 << 30, 1_000_000);

const params = {
  name: 'flood',
  _meta: { [META.protocolVersion]: PROTOCOL_VERSION, [META.clientCapabilities]: {} },
};

test('2026-07-28: the reader waits for the relay, and the upstream is held back meanwhile', async () => {
  const relay = gatedRelay();
  const call = sendEra20260728(transport, { alias: 'flood', url }, 'tools/call', params, {
    onNotification: relay.onNotification,
    answers,
  });
  const stalledAt = await upstreamStalled();
  expect(stalledAt).toBeLessThan(EVENTS);
  expect(relay.seen).toEqual([1]);
  relay.release();
  await expect(call).resolves.toEqual({ kind: 'result', result: { done: true } });
  expect(relay.seen).toHaveLength(EVENTS);
  expect(relay.seen.at(-1)).toBe(EVENTS);
}, 60_000);

test('2025 era: the same for a session exchange', async () => {
  const relay = gatedRelay();
  const wire = new Era20251125Wire(transport, answers);
  const call = wire.request({ endpoint: { alias: 'flood', url } }, 'tools/call', params, {
    onNotification: relay.onNotification,
  });
  const stalledAt = await upstreamStalled();
  expect(stalledAt).toBeLessThan(EVENTS);
  expect(relay.seen).toEqual([1]);
  relay.release();
  await expect(call).resolves.toMatchObject({ kind: 'result', result: { done: true } });
  expect(relay.seen).toHaveLength(EVENTS);
}, 60_000);
