/**
 * Fair shares between tenants (issue "safe to share", finding 5), against the real gateway, the real
 * Temporal dev server and a hostile upstream of the test's own that holds calls until the test lets them
 * go. Two projects on one upstream address: `noisy` (Alice's) and `victim` (Bob's). Whether the victim
 * was queued behind the noisy one is read from the upstream: it saw the victim's call while the noisy
 * calls were still held (no timing assertions).
 */
import type { ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { ConfigInput } from '../../src/config/config';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway, tokenUsers } from '../helpers/gateway';
import type { HostileUpstream } from '../helpers/hostile-upstream';
import { startHostileUpstream } from '../helpers/hostile-upstream';
import type { McpTestClient, RpcReply } from '../helpers/mcp-client';
import { TASKS_CAPS } from '../helpers/mcp-client';
import { testTemporal } from '../helpers/temporal';

const T = {
  alice: 'trp_alice-noisy-member-00000000000000000',
  bob: 'trp_bob-victim-member-000000000000000000',
};

interface Setup {
  gw: TestGateway;
  upstream: HostileUpstream;
  noisy: McpTestClient;
  victim: McpTestClient;
  /** Calls the upstream holds now. */
  holding(): number;
  /** Each call the upstream saw (`arguments.who`), with how many it held at that moment. */
  seen: Array<{ who: string; holding: number }>;
  /** Answers every held call. */
  release(): void;
  close(): Promise<void>;
}

/**
 * The upstream answers `tools/call` at once with a result naming the caller (`arguments.who`), or holds
 * it when `arguments.hold` is set. Both projects use the one upstream address, each as its own project
 * upstream.
 */
async function setup(config: Partial<ConfigInput>, opts: { tasks?: boolean } = {}): Promise<Setup> {
  const held: Array<{ res: ServerResponse; id: string | number; beat: NodeJS.Timeout }> = [];
  const seen: Setup['seen'] = [];
  const result = (id: string | number, text: string) => ({
    jsonrpc: '2.0',
    id,
    result: { resultType: 'complete', content: [{ type: 'text', text }] },
  });
  const upstream = await startHostileUpstream({
    tasks: opts.tasks ?? false,
    onRequest: (_req, res, message) => {
      const args = (message.params['arguments'] ?? {}) as Record<string, unknown>;
      const who = String(args['who'] ?? '');
      seen.push({ who, holding: held.length });
      if (args['hold'] !== true) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(result(message.id, who)));
        return;
      }
      // Held as an SSE answer kept alive with comments: however slow this machine, the gateway's idle
      // timeouts toward the upstream never end it before the test lets it go.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': held\n\n');
      const beat = setInterval(() => res.write(': held\n\n'), 2_000);
      held.push({ res, id: message.id, beat });
    },
  });
  const temporal = testTemporal();
  const gw = await startTestGateway({
    config: {
      temporal: { address: temporal.address, namespace: temporal.namespace, taskQueue: `tq-${randomUUID()}` },
      ...config,
    },
    projects: () => [],
    bootstrap: () => ({
      users: tokenUsers({ alice: T.alice, bob: T.bob }),
      teams: [
        { slug: 'loud', members: ['alice'] },
        { slug: 'quiet', members: ['bob'] },
      ],
      projects: ['noisy', 'victim'].map((slug) => ({
        slug,
        team: slug === 'noisy' ? 'loud' : 'quiet',
        namespacing: false,
        upstreams: [{ alias: 'up', url: upstream.url }],
      })),
    }),
  });
  const release = () => {
    for (const { res, id, beat } of held.splice(0)) {
      clearInterval(beat);
      if (!res.destroyed) res.end(`event: message\ndata: ${JSON.stringify(result(id, 'released'))}\n\n`);
    }
  };
  const settled = (reply: Promise<RpcReply>) =>
    // A call still open when a failed test closes the gateway must not fail the file afterwards.
    reply.catch(
      (err: unknown) =>
        ({
          status: 0,
          headers: new Headers(),
          body: { error: { code: 0, message: String(err) } },
        }) as RpcReply,
    );
  const client = (slug: string, token: string) => {
    const c = gw.clientFor(slug).withToken(token);
    const callTool = c.callTool.bind(c);
    c.callTool = (name, args, o) => settled(callTool(name, args, o));
    return c;
  };
  return {
    gw,
    upstream,
    noisy: client('noisy', T.alice),
    victim: client('victim', T.bob),
    holding: () => held.length,
    seen,
    release,
    async close() {
      release();
      await gw.close();
      await upstream.close();
    },
  };
}

async function until(done: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Sends `n` calls at once and counts those answered: the gateway (in this process) takes a while to read
 * them all, so a test waits until each was either answered or reached the upstream before it goes on.
 */
function burst(
  n: number,
  call: () => Promise<RpcReply>,
): { replies: Promise<RpcReply[]>; answered(): number } {
  let answered = 0;
  const replies = Promise.all(
    Array.from({ length: n }, () =>
      call().then((r) => {
        answered++;
        return r;
      }),
    ),
  );
  return { replies, answered: () => answered };
}

function outcomes(replies: RpcReply[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of replies) {
    const k = `${r.status} ${r.body.error?.code ?? 'ok'}`;
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

function expectRateLimited(reply: RpcReply, limit: string): void {
  expect(reply.status).toBe(429);
  expect(reply.body.error).toMatchObject({ code: -31013, data: { limit: `fairShare.${limit}` } });
  const retryAfterMs = (reply.body.error?.data as { retryAfterMs: number }).retryAfterMs;
  expect(retryAfterMs).toBeGreaterThan(0);
  expect(reply.headers.get('retry-after')).toBe(String(Math.max(1, Math.ceil(retryAfterMs / 1000))));
}

/** The victim's call, answered by the upstream itself while `noisy` calls were still held there. */
function expectServedBesideHeld(s: Setup, reply: RpcReply, heldAtLeast: number): void {
  expect(reply.status).toBe(200);
  expect(reply.body.result?.content).toEqual([{ type: 'text', text: 'victim' }]);
  const saw = s.seen.find((e) => e.who === 'victim');
  expect(saw?.holding).toBeGreaterThanOrEqual(heldAtLeast);
}

describe('ordinary calls, default shares', () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setup({});
  }, 300_000);
  afterAll(async () => {
    await s?.close();
  });

  test("one member's 200 concurrent calls to a slow upstream: the excess refused with -31013 and Retry-After, another project's call on the same address served at once", async () => {
    const flood = burst(200, () => s.noisy.callTool('attack', { hold: true }, { tasks: false }));
    // Alice's share of requests in flight is 64: those reach the upstream and are held there; the other
    // 136 are answered at once.
    await until(() => s.holding() === 64 && flood.answered() === 136, '64 held calls, 136 answered');
    const victim = await s.victim.callTool('attack', { who: 'victim' }, { tasks: false });
    expectServedBesideHeld(s, victim, 64);
    s.release();
    const replies = await flood.replies;
    expect(outcomes(replies)).toEqual({ '200 ok': 64, '429 -31013': 136 });
    for (const r of replies.filter((r) => r.status === 429)) expectRateLimited(r, 'calls.perCaller');
    // Refused calls never reached the upstream: it saw the 64 and the victim's, nothing else.
    expect(s.seen.filter((e) => e.who === '')).toHaveLength(64);
    expect(s.upstream.seen['tools/call']).toBe(65);
    // Once released, the share is free again.
    const after = await s.noisy.callTool('attack', { who: 'alice' }, { tasks: false });
    expect(after.status).toBe(200);
  }, 300_000);
});

describe('connection pools per project upstream', () => {
  let s: Setup;
  beforeAll(async () => {
    // A pool of 4 connections and a share of 64 calls: the noisy project's calls fill its own pool.
    s = await setup({
      upstreams: { poolConnections: 4 },
      fairShare: { calls: { perCaller: 64, perProject: 64 } },
    });
  }, 300_000);
  afterAll(async () => {
    await s?.close();
  });

  test("a project that fills its upstream's pool does not hold another project's calls to the same address", async () => {
    const flood = burst(40, () => s.noisy.callTool('attack', { hold: true }, { tasks: false }));
    // Four connections: four calls reach the upstream, the others wait for a connection of noisy's pool.
    await until(() => s.holding() === 4, '4 held calls');
    // One pool per address (as before) would hold the victim's call behind those four connections.
    const victim = await s.victim.callTool('attack', { who: 'victim' }, { tasks: false });
    expectServedBesideHeld(s, victim, 4);
    // Only four noisy calls had reached the upstream: the noisy pool's cap held.
    expect(s.seen.filter((e) => e.who === '')).toHaveLength(4);
    while (s.holding() > 0 || s.seen.filter((e) => e.who === '').length < 40) {
      s.release();
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(outcomes(await flood.replies)).toEqual({ '200 ok': 40 });
  }, 300_000);
});

describe('task creations', () => {
  let s: Setup;
  beforeAll(async () => {
    // A worker with 20 local-activity slots (where each creation's first upstream call runs), and
    // creation shares sized below them. Alice's own shares are wide, as if the project had many callers.
    const temporal = testTemporal();
    s = await setup(
      {
        temporal: {
          address: temporal.address,
          namespace: temporal.namespace,
          taskQueue: `tq-${randomUUID()}`,
          maxConcurrentLocalActivities: 20,
        },
        fairShare: {
          calls: { perCaller: 1000, perProject: 1000 },
          creations: {
            inFlightPerCaller: 1000,
            inFlightPerProject: 8,
            inFlightTotal: 12,
            perSecondPerCaller: 1000,
            burstPerCaller: 1000,
            perSecondPerProject: 1000,
            burstPerProject: 1000,
          },
        },
      },
      { tasks: true },
    );
  }, 300_000);
  afterAll(async () => {
    await s?.close();
  });

  test("210 creations of one project held in their first call: the excess refused early, another project's creation succeeds (no -31002)", async () => {
    const creations = burst(210, () =>
      s.noisy.callTool('attack', { hold: true }, { capabilities: TASKS_CAPS }),
    );
    await until(() => s.holding() === 8 && creations.answered() === 202, '8 held first calls, 202 answered');
    const victim = await s.victim.callTool('attack', { who: 'victim' }, { capabilities: TASKS_CAPS });
    expectServedBesideHeld(s, victim, 8);
    s.release();
    const replies = await creations.replies;
    expect(outcomes(replies)).toEqual({ '200 ok': 8, '429 -31013': 202 });
    for (const r of replies.filter((r) => r.status === 429))
      expectRateLimited(r, 'creations.inFlightPerProject');
    // No refused creation reached the upstream.
    expect(s.seen.filter((e) => e.who === '')).toHaveLength(8);
  }, 300_000);

  test('the replica-wide bound: a third project past it is refused early too, not left to the start deadline', async () => {
    const creations = burst(20, () =>
      s.noisy.callTool('attack', { hold: true }, { capabilities: TASKS_CAPS }),
    );
    await until(() => s.holding() === 8 && creations.answered() === 12, '8 held first calls, 12 answered');
    const victims = burst(6, () => s.victim.callTool('attack', { hold: true }, { capabilities: TASKS_CAPS }));
    // 8 + 4 reach the upstream: the replica's 12; the other two of the victim's are refused at once.
    await until(() => s.holding() === 12 && victims.answered() === 2, '12 held first calls, 2 answered');
    s.release();
    const replies = await victims.replies;
    expect(outcomes(replies)).toEqual({ '200 ok': 4, '429 -31013': 2 });
    for (const r of replies.filter((r) => r.status === 429)) expectRateLimited(r, 'creations.inFlightTotal');
    expect(outcomes(await creations.replies)).toEqual({ '200 ok': 8, '429 -31013': 12 });
  }, 300_000);
});

describe('task creations per second', () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setup(
      // Per-second creation tokens are taken on the worker path only: the API's own first call takes
      // none, since most of its calls never become tasks (docs/decisions.md).
      {
        tasks: { firstCallFrom: 'worker' },
        fairShare: { creations: { perSecondPerCaller: 0.05, burstPerCaller: 3 } },
      },
      {
        tasks: true,
      },
    );
  }, 300_000);
  afterAll(async () => {
    await s?.close();
  });

  test('a burst past the bucket: the excess refused with the wait until the next token, and never sent', async () => {
    const replies: RpcReply[] = [];
    for (let i = 0; i < 6; i++) {
      replies.push(await s.noisy.callTool('attack', { who: `alice-${i}` }, { capabilities: TASKS_CAPS }));
    }
    expect(outcomes(replies)).toEqual({ '200 ok': 3, '429 -31013': 3 });
    for (const r of replies.slice(3)) {
      expectRateLimited(r, 'creations.perSecondPerCaller');
      // A token comes every 20 s.
      expect((r.body.error?.data as { retryAfterMs: number }).retryAfterMs).toBeLessThanOrEqual(20_000);
    }
    expect(s.seen.map((e) => e.who)).toEqual(['alice-0', 'alice-1', 'alice-2']);
    // Another caller in another project has a bucket of its own.
    const victim = await s.victim.callTool('attack', { who: 'victim' }, { capabilities: TASKS_CAPS });
    expect(victim.status).toBe(200);
  }, 300_000);
});
