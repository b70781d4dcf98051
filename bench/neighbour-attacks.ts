/**
 * The attacks `bench:neighbours` runs, one at a time, each by an attacking tenant against a shared gateway
 * (issue 22's findings): a hostile upstream's answers (bench/hostile-process.ts), a client that stops
 * reading, costly requests, and floods of calls, task creations and listen streams. `start` begins the
 * attack and resolves once it is under way; the function it returns ends it and frees what it held.
 */
import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { request } from 'undici';
import { META, PROTOCOL_VERSION, requestHeaders, TASKS_EXTENSION } from '../src/protocol';
import type { StalledClient } from '../test/helpers/hostile-upstream';
import { stalledClient } from '../test/helpers/hostile-upstream';
import type { ListenStream, McpHttpClient } from './support';
import { sleep } from './support';

export interface AttackContext {
  /** The attacking project's MCP endpoint. */
  url: string;
  token: string;
  /** The attacker's client without Tasks (ordinary calls), on a dispatcher with room for every lane. */
  client: McpHttpClient;
  /** The same, declaring Tasks (creations). */
  tasksClient: McpHttpClient;
  dispatcher: Dispatcher;
}

export interface Attack {
  name: string;
  what: string;
  /** Whether the victim's task creations are measured too (attacks on the task path). */
  tasks?: boolean;
  start(ctx: AttackContext): Promise<() => Promise<void>>;
}

/**
 * `lanes` loops of `op` until stopped. A lane told to retry later (`-31013` with `retryAfterMs`, or a
 * refused listen) waits as told, as clients do: an attacker that ignores it is a request flood, which a
 * gateway answers cheaply one by one but which belongs to the reverse proxy's rate limits (docs/gateway.md).
 */
function lanes(count: number, op: (lane: number, i: number) => Promise<unknown>): () => Promise<void> {
  let stopped = false;
  const running = Array.from({ length: count }, async (_, lane) => {
    for (let i = 0; !stopped; i++) {
      try {
        const wait = retryAfterMs(await op(lane, i));
        if (wait !== undefined) await sleep(wait);
      } catch {
        await sleep(1000); // refused or cut: try again a little later
      }
    }
  });
  return async () => {
    stopped = true;
    await Promise.race([Promise.all(running), sleep(15_000)]);
  };
}

/** The delay a `-31013` refusal asks for; undefined for anything else. */
function retryAfterMs(reply: unknown): number | undefined {
  const error = (reply as { error?: { code?: number; data?: { retryAfterMs?: unknown } } } | undefined)
    ?.error;
  if (error?.code !== -31013) return undefined;
  const ms = error.data?.retryAfterMs;
  return typeof ms === 'number' ? ms : 1000;
}

/** The `-31013` refusal quoted in a failed listen's message (`HTTP 429 {…}`), as a reply `lanes` reads. */
function refusalIn(err: unknown): unknown {
  const ms = /"retryAfterMs":(\d+)/.exec(err instanceof Error ? err.message : '')?.[1];
  if (ms === undefined) throw err;
  return { error: { code: -31013, data: { retryAfterMs: Number(ms) } } };
}

/** A loop attack of `count` lanes calling `tool` with `args(lane, i)`, held until stopped. */
function callFlood(
  name: string,
  what: string,
  count: number,
  tool: string,
  args: (lane: number, i: number) => Record<string, unknown>,
  tasks = false,
): Attack {
  return {
    name,
    what,
    tasks,
    async start(ctx) {
      const client = tasks ? ctx.tasksClient : ctx.client;
      const stop = lanes(count, (lane, i) => client.callTool(tool, args(lane, i)));
      await sleep(2000);
      return stop;
    },
  };
}

/** The body of a hand-made tools/call request (an attacker's, sent without the bench client). */
function toolsCallBody(id: number, params: Record<string, unknown>, meta: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { ...params, _meta: meta } });
}

/** The headers of such a request (content type, accept and protocol headers), with the attacker's token. */
function toolsCallHeaders(params: Record<string, unknown>, token: string): Record<string, string> {
  return { ...requestHeaders('tools/call', params, PROTOCOL_VERSION), authorization: `Bearer ${token}` };
}

/** Clients that send a call to the flooding tool and never read their sockets. */
const stalledSse: Attack = {
  name: 'stalled-sse',
  what: '4 clients stop reading while an upstream streams 64 KB progress events without end',
  async start(ctx) {
    const clients: StalledClient[] = [];
    for (let i = 0; i < 4; i++) {
      const params = { name: 'hostile.flood_progress', arguments: {} };
      const body = toolsCallBody(i + 1, params, { ...envelope(), progressToken: `p${i}` });
      clients.push(await stalledClient(ctx.url, body, toolsCallHeaders(params, ctx.token)));
    }
    await sleep(3000);
    return async () => {
      for (const c of clients) c.close();
    };
  },
};

/** A request whose `_meta` has 162,000 members (about 3.5 MB, under the body limit). */
function costlyRequests(): Attack {
  const meta = Object.fromEntries(Array.from({ length: 162_000 }, (_, i) => [`k${i}`, 1]));
  const params = { name: 'shared.work', arguments: { ms: 1 } };
  const body = toolsCallBody(1, params, { ...meta, ...envelope() });
  return {
    name: 'costly-requests',
    what: `16 clients send requests whose _meta has 162,000 keys (${(body.length / 1e6).toFixed(1)} MB)`,
    async start(ctx) {
      const headers = toolsCallHeaders(params, ctx.token);
      const stop = lanes(16, async () => {
        const res = await request(ctx.url, { method: 'POST', headers, body, dispatcher: ctx.dispatcher });
        await res.body.dump();
      });
      await sleep(2000);
      return stop;
    },
  };
}

/** One caller opening listen streams until refused, and holding them. */
const listenFlood: Attack = {
  name: 'listen-flood',
  what: '400 concurrent subscriptions/listen of one caller',
  async start(ctx) {
    const held: ListenStream[] = [];
    const stop = lanes(400, async () => {
      let stream: ListenStream;
      try {
        stream = await ctx.client.listen({ toolsListChanged: true });
      } catch (err) {
        return refusalIn(err); // a refused listen waits as its Retry-After says
      }
      held.push(stream);
      await stream.ended;
      return undefined;
    });
    await sleep(3000);
    return async () => {
      await Promise.all(held.map((s) => s.close().catch(() => undefined)));
      await stop();
    };
  },
};

function envelope(): Record<string, unknown> {
  return {
    [META.protocolVersion]: PROTOCOL_VERSION,
    [META.clientCapabilities]: { extensions: { [TASKS_EXTENSION]: {} } },
    [META.clientInfo]: { name: 'bench-attacker', version: '1.0.0' },
  };
}

const run = randomUUID().slice(0, 8);

export function attacks(): Attack[] {
  return [
    stalledSse,
    callFlood('huge-json', '2 clients call a tool answering 300 MB of JSON', 2, 'hostile.huge_json', () => ({
      mb: 300,
    })),
    callFlood(
      'unterminated-sse',
      '2 clients call a tool whose SSE event never ends',
      2,
      'hostile.unterminated_sse',
      () => ({}),
    ),
    callFlood(
      'many-meta',
      '4 clients call a tool answering a 50,000-key _meta',
      4,
      'hostile.many_meta',
      () => ({
        keys: 50_000,
      }),
    ),
    callFlood('drip', '20 clients call a tool that drips one byte every 3 s', 20, 'hostile.drip', () => ({})),
    costlyRequests(),
    callFlood(
      'pool-flood',
      "200 concurrent 10 s calls of one member to the victim's upstream address",
      200,
      'shared.work',
      (lane, i) => ({ ms: 10_000, nonce: `${run}-${lane}-${i}` }),
    ),
    callFlood(
      'slot-flood',
      '210 concurrent task calls whose upstream takes 30 s to answer',
      210,
      'tasks.slow_task',
      () => ({ ms: 30_000 }),
      true,
    ),
    callFlood(
      'creation-burst',
      '32 clients creating tasks as fast as they can',
      32,
      'shared.slow_compute',
      (lane, i) => ({ seconds: 1, label: `${run}-${lane}-${i}` }),
      true,
    ),
    listenFlood,
  ];
}
