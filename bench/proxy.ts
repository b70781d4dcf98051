/**
 * `npm run bench:proxy [-- --n 1000 --concurrency 1,8,64 --ms 5 --cache miss,hit --target-at 1
 *   --scenarios 2026->2026,2025->2025,2026->2025,2025->2026]`
 *
 * What the gateway adds to an ordinary (non-task) `tools/call`, measured on what users run. The bench
 * starts an in-memory Temporal dev server, two upstreams as processes of their own (the example upstream,
 * 2026-07-28, bench/upstream-process.ts; a 2025-era SDK 1.x server with sessions, bench/upstream-2025.ts;
 * both serve a read-only `work {ms}` tool) and the gateway as its own process through the production
 * entry point, `node dist/src/main/serve.js all` (built first when dist/ is missing or stale), with
 * default settings: a bootstrap file declares a user with a personal access token and project `bench` on
 * both upstreams (`example`, `legacy`; the gateway probes each one's era when it is added), so
 * authentication is required, tools are namespaced (`example.work`, `legacy.work`), the result cache is on
 * and the log is at info. This process is the client: per scenario (`scenarios`: client era -> upstream
 * era) it calls `work` directly on the upstream, with a client of the upstream's era, and through the
 * gateway with the scenario's client (with the token); the 2025-11-25 client initializes a session first
 * (bench/support.ts, `era: 'legacy'`):
 *
 * - cache miss: every call carries a unique `nonce` argument (the upstream ignores it), so the gateway's
 *   result cache never answers and each call goes upstream;
 * - cache hit: the same arguments every time, so after the first call the gateway answers from its cache
 *   (checked on every reply: `_meta["com.taskrouter/cache"] === "hit"`); the direct side still does the
 *   work, so this ratio shows what the cache saves.
 *
 * For each scenario, cache mode and concurrency level the two sides run in alternating blocks (ABBA, so
 * drift and the shared machine's noise hit both alike), each block with that many calls in flight. Latency
 * is per call; requests per second is a side's calls over the summed wall time of its blocks; CPU per call
 * is what the gateway process (or, direct, the upstream process) used during its blocks (/proc, 10 ms
 * ticks) over the calls. Prints a table, PASS/FAIL per scenario for the cache-miss latency targets at
 * --target-at (p50 ratio <= 1.15, p99 ratio <= 1.3; the exit code is 0 either way) and, last, one JSON
 * line. Leaves no processes behind.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { Agent } from 'undici';
import { CACHE_META_KEY } from '../src/gateway/gateway';
import { note, onCleanup, runBench, startTemporal, tempDir } from './env';
import type { GatewayProcess, UpstreamProcess } from './processes';
import {
  benchUsers,
  buildIfNeeded,
  cpuMs,
  startGatewayProcess,
  startLegacyUpstreamProcess,
  startUpstreamProcess,
} from './processes';
import type { RpcReply, SideSample } from './support';
import {
  abba,
  finishReport,
  machine,
  McpHttpClient,
  percentile,
  ratio,
  replyProblem,
  round,
  table,
} from './support';
import { readFlags } from './options';

const TARGET = { p50: 1.15, p99: 1.3 };
const SIDES = ['direct', 'gateway'] as const;
type Side = (typeof SIDES)[number];
type CacheMode = 'miss' | 'hit';
/** Scenarios (client era -> upstream era, see `scenarios`), in the order they run. */
const SCENARIO_LABELS = ['2026->2026', '2025->2025', '2026->2025', '2025->2026'] as const;
type ScenarioLabel = (typeof SCENARIO_LABELS)[number];

interface Options {
  n: number;
  concurrency: number[];
  ms: number;
  block: number;
  warmup: number;
  cache: CacheMode[];
  targetAt: number;
  scenarios: ScenarioLabel[];
}

function parseOptions(argv: string[]): Options {
  const flags = readFlags(
    argv,
    {
      n: '1000',
      concurrency: '1,8,64',
      ms: '5',
      block: '50',
      warmup: '100',
      cache: 'miss,hit',
      'target-at': '1',
      scenarios: SCENARIO_LABELS.join(','),
    },
    'usage: npm run bench:proxy -- [--n 1000] [--concurrency 1,8,64] [--ms 5] [--block 50] [--warmup 100]\n' +
      `       [--cache miss,hit] [--target-at 1] [--scenarios ${SCENARIO_LABELS.join(',')}]\n` +
      '  --n          calls per side at each concurrency level and cache mode\n' +
      '  --block      calls per ABBA block (at least 4 x the concurrency)\n' +
      '  --warmup     unmeasured calls per side before each measurement\n' +
      '  --target-at  the concurrency level whose cache-miss latency is judged against the targets\n' +
      '  --scenarios  client era -> upstream era paths to measure (see bench/proxy.ts)\n',
  );
  const { int, num, values } = flags;
  const cache = values.cache.split(',').map((s) => s.trim());
  for (const c of cache) {
    if (c !== 'miss' && c !== 'hit') throw new Error(`--cache must list miss and/or hit (got ${c})`);
  }
  const scenarios = values.scenarios.split(',').map((x) => x.trim());
  for (const x of scenarios) {
    if (!(SCENARIO_LABELS as readonly string[]).includes(x)) {
      throw new Error(`--scenarios must list some of ${SCENARIO_LABELS.join(', ')} (got ${x})`);
    }
  }
  return {
    n: int('n', 1),
    concurrency: flags.ints('concurrency', 1),
    ms: num('ms', 0),
    block: int('block', 1),
    warmup: int('warmup', 0),
    cache: cache as CacheMode[],
    targetAt: int('target-at', 1),
    scenarios: scenarios as ScenarioLabel[],
  };
}

// ---------------------------------------------------------------------------------------------------
// Scenarios

/** Whatever calls a tool at a URL: the 2026-07-28 client or the 2025-11-25 session client. */
interface ToolClient {
  readonly url: string;
  callTool(name: string, args: Record<string, unknown>): Promise<RpcReply>;
}

interface Endpoint {
  client: ToolClient;
  /** The tool's name on this side (namespaced through the gateway). */
  tool: string;
  /** The process serving this side, for its CPU time. */
  pid: number;
}

interface Scenario {
  /** `<client era> -> <upstream era>`. */
  label: string;
  direct: Endpoint;
  gateway: Endpoint;
}

/**
 * Each scenario calls the same `work` tool through the gateway with a client of one era and directly,
 * on the upstream, with a client of the upstream's own era (the only one it speaks):
 *
 * - `2026->2026`: 2026-07-28 clients; the example upstream (`example.work` through the gateway);
 * - `2025->2025`: 2025-11-25 session clients; the SDK 1.x upstream (`legacy.work`): the gateway's client
 *   adapter and its 2025 upstream path together, against the upstream alone;
 * - `2026->2025`: a 2026-07-28 client through the gateway to the SDK 1.x upstream, against a 2025 session
 *   client on that upstream: the 2025 upstream path alone;
 * - `2025->2026`: a 2025-11-25 session client through the gateway to the example upstream, against a
 *   2026 client on it: the client adapter alone.
 */
async function scenarios(
  ctx: {
    agent: Agent;
    upstream: UpstreamProcess;
    legacy: { url: string; pid: number };
    gateway: GatewayProcess;
    token: string;
  },
  wanted: readonly ScenarioLabel[],
): Promise<Scenario[]> {
  const endpoint = `${ctx.gateway.url}/v1/mcp/bench`;
  const modern = (url: string, token?: string) =>
    new McpHttpClient(url, ctx.agent, { tasks: false, ...(token !== undefined && { token }) });
  const legacy = async (url: string, token?: string) => {
    const client = new McpHttpClient(url, ctx.agent, {
      era: 'legacy',
      ...(token !== undefined && { token }),
    });
    await client.connect();
    return client;
  };
  const direct2026: Endpoint = { client: modern(ctx.upstream.url), tool: 'work', pid: ctx.upstream.pid };
  const direct2025 = async (): Promise<Endpoint> => ({
    client: await legacy(ctx.legacy.url),
    tool: 'work',
    pid: ctx.legacy.pid,
  });
  const through = (client: ToolClient, tool: string): Endpoint => ({ client, tool, pid: ctx.gateway.pid });
  const build: Record<ScenarioLabel, () => Promise<Omit<Scenario, 'label'>>> = {
    '2026->2026': async () => ({
      direct: direct2026,
      gateway: through(modern(endpoint, ctx.token), 'example.work'),
    }),
    '2025->2025': async () => ({
      direct: await direct2025(),
      gateway: through(await legacy(endpoint, ctx.token), 'legacy.work'),
    }),
    '2026->2025': async () => ({
      direct: await direct2025(),
      gateway: through(modern(endpoint, ctx.token), 'legacy.work'),
    }),
    '2025->2026': async () => ({
      direct: direct2026,
      gateway: through(await legacy(endpoint, ctx.token), 'example.work'),
    }),
  };
  const out: Scenario[] = [];
  for (const label of wanted) out.push({ label, ...(await build[label]()) });
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Measurement

interface SideFigures {
  count: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
  rps: number;
  /** CPU ms of the serving process per call, during this side's blocks. */
  cpuMsPerCall: number;
  errors: number;
  cacheHits: number;
}

interface Cell {
  scenario: string;
  cache: CacheMode;
  concurrency: number;
  direct: SideFigures;
  gateway: SideFigures;
  ratio: { p50: number; p99: number; mean: number; rps: number; cpu: number };
}

function isCacheHit(reply: RpcReply): boolean {
  const meta = reply.result?._meta as Record<string, unknown> | undefined;
  return meta?.[CACHE_META_KEY] === 'hit';
}

function figures(s: SideSample, cpu: number, cacheHits: number): SideFigures {
  const xs = s.latencies;
  return {
    count: xs.length,
    p50: percentile(xs, 50),
    p99: percentile(xs, 99),
    mean: xs.reduce((a, b) => a + b, 0) / xs.length,
    max: Math.max(...xs),
    rps: s.wallMs > 0 ? (xs.length / s.wallMs) * 1000 : Number.NaN,
    cpuMsPerCall: xs.length > 0 ? cpu / xs.length : Number.NaN,
    errors: s.errors.length,
    cacheHits,
  };
}

async function measure(
  scenario: Scenario,
  cache: CacheMode,
  concurrency: number,
  opts: Options,
): Promise<{ cell: Cell; errors: string[] }> {
  const run = randomUUID().slice(0, 8);
  const block = Math.max(opts.block, concurrency * 4);
  // Miss: a nonce unique per call and side (the upstream ignores it; the cache key covers it).
  // Hit: identical arguments every time; the warm-up's first gateway call fills the cache.
  const args = (phase: string, side: Side, i: number): Record<string, unknown> =>
    cache === 'miss' ? { ms: opts.ms, nonce: `${run}-${phase}-${side}-${i}` } : { ms: opts.ms };
  const hits: Record<Side, number> = { direct: 0, gateway: 0 };
  const call = (phase: string) => async (side: Side, i: number) => {
    const reply = await scenario[side].client.callTool(scenario[side].tool, args(phase, side, i));
    const problem = replyProblem(reply);
    if (problem !== undefined) throw new Error(problem);
    if (phase === 'measure' && isCacheHit(reply)) hits[side]++;
  };
  if (opts.warmup > 0) {
    await abba(SIDES, { n: opts.warmup, block: Math.min(block, opts.warmup), concurrency }, call('warmup'));
  }
  const cpu: Record<Side, number> = { direct: 0, gateway: 0 };
  let cpuAtStart = 0;
  const samples = await abba(SIDES, { n: opts.n, block, concurrency }, call('measure'), {
    blockStart: (side) => (cpuAtStart = cpuMs(scenario[side].pid)),
    blockEnd: (side) => (cpu[side] += cpuMs(scenario[side].pid) - cpuAtStart),
  });
  const direct = figures(samples.direct, cpu.direct, hits.direct);
  const gateway = figures(samples.gateway, cpu.gateway, hits.gateway);
  const errors = [...samples.direct.errors, ...samples.gateway.errors];
  if (cache === 'hit' && gateway.cacheHits !== gateway.count) {
    errors.push(`cache hit: only ${gateway.cacheHits} of ${gateway.count} gateway replies were cache hits`);
  }
  if (cache === 'miss' && gateway.cacheHits > 0) {
    errors.push(`cache miss: ${gateway.cacheHits} gateway replies were cache hits`);
  }
  const cell: Cell = {
    scenario: scenario.label,
    cache,
    concurrency,
    direct,
    gateway,
    ratio: {
      p50: ratio(gateway.p50, direct.p50),
      p99: ratio(gateway.p99, direct.p99),
      mean: ratio(gateway.mean, direct.mean),
      rps: ratio(gateway.rps, direct.rps),
      cpu: ratio(gateway.cpuMsPerCall, direct.cpuMsPerCall, 1),
    },
  };
  note(
    `${scenario.label} ${cache} c=${concurrency}: p50 ${round(direct.p50)} / ${round(gateway.p50)} ms, ` +
      `req/s ${round(direct.rps, 0)} / ${round(gateway.rps, 0)} (direct / gateway)`,
  );
  return { cell, errors };
}

/**
 * Authentication is on: a call without the token is refused. Namespacing is on: the tools are
 * `example.work` and `legacy.work` (the 2025 upstream, whose era the gateway probed when it was added).
 */
async function checkDefaults(gateway: GatewayProcess, agent: Agent, token: string): Promise<void> {
  const endpoint = `${gateway.url}/v1/mcp/bench`;
  const anonymous = await new McpHttpClient(endpoint, agent, { tasks: false }).request('tools/list', {});
  if (anonymous.status !== 401) throw new Error(`expected 401 without a token, got HTTP ${anonymous.status}`);
  const list = await new McpHttpClient(endpoint, agent, { tasks: false, token }).request('tools/list', {});
  const names = ((list.result?.tools ?? []) as Array<{ name: string }>).map((t) => t.name);
  for (const tool of ['example.work', 'legacy.work']) {
    if (!names.includes(tool)) throw new Error(`no ${tool} in tools/list: ${names.join(', ')}`);
  }
}

// ---------------------------------------------------------------------------------------------------
// Main

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const t0 = performance.now();
  buildIfNeeded();
  const temporal = await startTemporal();
  const dir = tempDir();
  const upstream = await startUpstreamProcess('bench-proxy-upstream');
  const legacy = await startLegacyUpstreamProcess('bench-proxy-2025-upstream');
  const [user] = benchUsers(1);
  if (!user) throw new Error('no user');
  const gateway = await startGatewayProcess({
    temporal,
    dir,
    users: [user],
    projects: [
      {
        slug: 'bench',
        upstreams: [
          { alias: 'example', url: upstream.url },
          { alias: 'legacy', url: legacy.url },
        ],
      },
    ],
  });
  // One dispatcher for both sides, no per-origin connection cap: same client code path, same pool rules.
  const agent = new Agent({ keepAliveTimeout: 30_000, headersTimeout: 60_000, bodyTimeout: 60_000 });
  onCleanup('http agent', () => agent.close());
  await checkDefaults(gateway, agent, user.token);

  const cells: Cell[] = [];
  const errors: string[] = [];
  const chosen = await scenarios({ agent, upstream, legacy, gateway, token: user.token }, opts.scenarios);
  for (const scenario of chosen) {
    for (const cache of opts.cache) {
      for (const concurrency of opts.concurrency) {
        const r = await measure(scenario, cache, concurrency, opts);
        cells.push(r.cell);
        errors.push(...r.errors);
      }
    }
  }
  const log = gateway.log();

  const out: string[] = [''];
  out.push(
    `bench:proxy  work {ms: ${opts.ms}} directly on the upstream vs through the gateway (serve all, ` +
      `default settings, token auth); scenarios: client era -> upstream era (2026: example upstream, ` +
      `2025: SDK 1.x, stateful); ${opts.n} calls per side per row after ${opts.warmup} warm-up, ABBA blocks; ` +
      `node ${process.version}, ${os.cpus().length} cpus, load ${os.loadavg()[0]?.toFixed(1)}`,
  );
  out.push('');
  const rows: Array<Array<string | number>> = [
    [
      'scenario',
      'cache',
      'conc',
      'p50 direct',
      'p50 gw',
      'ratio',
      'p99 direct',
      'p99 gw',
      'ratio',
      'req/s direct',
      'req/s gw',
      'ratio',
      'CPU ms/call direct',
      'gw',
    ],
  ];
  for (const c of cells) {
    rows.push([
      c.scenario,
      c.cache,
      c.concurrency,
      round(c.direct.p50),
      round(c.gateway.p50),
      c.ratio.p50,
      round(c.direct.p99),
      round(c.gateway.p99),
      c.ratio.p99,
      round(c.direct.rps, 0),
      round(c.gateway.rps, 0),
      c.ratio.rps,
      round(c.direct.cpuMsPerCall, 2),
      round(c.gateway.cpuMsPerCall, 2),
    ]);
  }
  out.push(table(rows));
  out.push('');
  const verdict: Record<string, Record<string, 'PASS' | 'FAIL'>> = {};
  for (const c of cells.filter((x) => x.cache === 'miss' && x.concurrency === opts.targetAt)) {
    const v = {
      p50: c.ratio.p50 <= TARGET.p50 ? ('PASS' as const) : ('FAIL' as const),
      p99: c.ratio.p99 <= TARGET.p99 ? ('PASS' as const) : ('FAIL' as const),
    };
    verdict[c.scenario] = v;
    out.push(
      `${c.scenario} cache miss at concurrency ${c.concurrency}: p50 ratio ${c.ratio.p50} ` +
        `(target <= ${TARGET.p50}): ${v.p50}; p99 ratio ${c.ratio.p99} (target <= ${TARGET.p99}): ${v.p99}`,
    );
  }
  const totalSeconds = finishReport(out, { count: errors.length, examples: errors }, log, t0);
  const json = cells.map((c) => ({
    ...c,
    direct: roundFigures(c.direct),
    gateway: roundFigures(c.gateway),
  }));
  process.stdout.write(
    `${JSON.stringify({
      bench: 'proxy',
      options: opts,
      machine: machine(),
      results: json,
      target: { ...TARGET, concurrency: opts.targetAt },
      verdict,
      errors: errors.length,
      gatewayLog: { warnings: log.warnings, errors: log.errors },
      totalSeconds,
    })}\n`,
  );
}

function roundFigures(f: SideFigures): SideFigures {
  return {
    ...f,
    p50: round(f.p50, 2),
    p99: round(f.p99, 2),
    mean: round(f.mean, 2),
    max: round(f.max, 2),
    rps: round(f.rps, 0),
    cpuMsPerCall: round(f.cpuMsPerCall, 3),
  };
}

runBench(main);
