/**
 * `npm run bench:proxy [-- --n 1000 --concurrency 1,8,64 --ms 5 --cache miss,hit --target-at 1]`
 *
 * What the gateway adds to an ordinary (non-task) `tools/call`, measured on what users run. The bench
 * starts an in-memory Temporal dev server, the example upstream as its own process
 * (bench/upstream-process.ts) and the gateway as its own process through the production entry point,
 * `node dist/src/main/serve.js all` (built first when dist/ is missing or stale), with default settings:
 * a bootstrap file declares a user with a personal access token and project `bench` on the upstream, so
 * authentication is required, tools are namespaced (`example.work`), the result cache is on and the log
 * is at info. This process is the client: it calls the upstream's read-only `work {ms}` tool directly and
 * `example.work` through the gateway (with the token), with the same client code:
 *
 * - cache miss: every call carries a unique `nonce` argument (the upstream ignores unknown arguments), so
 *   the gateway's result cache never answers and each call goes upstream;
 * - cache hit: the same arguments every time, so after the first call the gateway answers from its cache
 *   (checked on every reply: `_meta["com.taskrouter/cache"] === "hit"`); the direct side still does the
 *   work, so this ratio shows what the cache saves.
 *
 * For each scenario, cache mode and concurrency level the two sides run in alternating blocks (ABBA, so
 * drift and the shared machine's noise hit both alike), each block with that many calls in flight. Latency
 * is per call; requests per second is a side's calls over the summed wall time of its blocks; CPU per call
 * is what the gateway process (or, direct, the upstream process) used during its blocks (/proc, 10 ms
 * ticks) over the calls. Prints a table, PASS/FAIL for the cache-miss latency targets at --target-at
 * (p50 ratio <= 1.15, p99 ratio <= 1.3; the exit code is 0 either way) and, last, one JSON line.
 * Leaves no processes behind.
 *
 * A scenario is a label and, per side, a client and the tool name it calls (`SCENARIOS`): other client
 * paths (e.g. 2025-era sessions through the gateway's adapter) are one more entry there.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { Agent } from 'undici';
import { CACHE_META_KEY } from '../src/gateway/gateway';
import { note, onCleanup, runBench, startTemporal, tempDir } from './env';
import type { GatewayProcess, UpstreamProcess } from './processes';
import { benchUsers, buildIfNeeded, cpuMs, startGatewayProcess, startUpstreamProcess } from './processes';
import type { RpcReply, SideSample } from './support';
import { abba, McpHttpClient, percentile, ratio, replyProblem, round, table } from './support';

const TARGET = { p50: 1.15, p99: 1.3 };
const SIDES = ['direct', 'gateway'] as const;
type Side = (typeof SIDES)[number];
type CacheMode = 'miss' | 'hit';

interface Options {
  n: number;
  concurrency: number[];
  ms: number;
  block: number;
  warmup: number;
  cache: CacheMode[];
  targetAt: number;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      n: { type: 'string', default: '1000' },
      concurrency: { type: 'string', default: '1,8,64' },
      ms: { type: 'string', default: '5' },
      block: { type: 'string', default: '50' },
      warmup: { type: 'string', default: '100' },
      cache: { type: 'string', default: 'miss,hit' },
      'target-at': { type: 'string', default: '1' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(
      'usage: npm run bench:proxy -- [--n 1000] [--concurrency 1,8,64] [--ms 5] [--block 50] [--warmup 100]\n' +
        '       [--cache miss,hit] [--target-at 1]\n' +
        '  --n          calls per side at each concurrency level and cache mode\n' +
        '  --block      calls per ABBA block (at least 4 x the concurrency)\n' +
        '  --warmup     unmeasured calls per side before each measurement\n' +
        '  --target-at  the concurrency level whose cache-miss latency is judged against the targets\n',
    );
    process.exit(0);
  }
  const num = (name: string, raw: string, min: number): number => {
    const v = Number(raw);
    if (!Number.isFinite(v) || v < min) throw new Error(`--${name} must be a number >= ${min} (got ${raw})`);
    return v;
  };
  const cache = values.cache.split(',').map((s) => s.trim());
  for (const c of cache) {
    if (c !== 'miss' && c !== 'hit') throw new Error(`--cache must list miss and/or hit (got ${c})`);
  }
  const concurrency = values.concurrency.split(',').map((c) => Math.floor(num('concurrency', c, 1)));
  return {
    n: Math.floor(num('n', values.n, 1)),
    concurrency,
    ms: num('ms', values.ms, 0),
    block: Math.floor(num('block', values.block, 1)),
    warmup: Math.floor(num('warmup', values.warmup, 0)),
    cache: cache as CacheMode[],
    targetAt: Math.floor(num('target-at', values['target-at'], 1)),
  };
}

// ---------------------------------------------------------------------------------------------------
// Scenarios

/** Whatever calls a tool at a URL: today the 2026-07-28 client; later, e.g., a 2025-era session client. */
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
  label: string;
  direct: Endpoint;
  gateway: Endpoint;
}

function scenarios(ctx: {
  agent: Agent;
  upstream: UpstreamProcess;
  gateway: GatewayProcess;
  token: string;
}): Scenario[] {
  const endpoint = `${ctx.gateway.url}/v1/mcp/bench`;
  return [
    {
      label: '2026-07-28',
      direct: {
        client: new McpHttpClient(ctx.upstream.url, ctx.agent, { tasks: false }),
        tool: 'work',
        pid: ctx.upstream.pid,
      },
      gateway: {
        client: new McpHttpClient(endpoint, ctx.agent, { tasks: false, token: ctx.token }),
        tool: 'example.work',
        pid: ctx.gateway.pid,
      },
    },
  ];
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

/** Authentication is on: a call without the token is refused. Namespacing is on: the tool is `example.work`. */
async function checkDefaults(gateway: GatewayProcess, agent: Agent, token: string): Promise<void> {
  const endpoint = `${gateway.url}/v1/mcp/bench`;
  const anonymous = await new McpHttpClient(endpoint, agent, { tasks: false }).request('tools/list', {});
  if (anonymous.status !== 401) throw new Error(`expected 401 without a token, got HTTP ${anonymous.status}`);
  const list = await new McpHttpClient(endpoint, agent, { tasks: false, token }).request('tools/list', {});
  const names = ((list.result?.tools ?? []) as Array<{ name: string }>).map((t) => t.name);
  if (!names.includes('example.work')) throw new Error(`no example.work in tools/list: ${names.join(', ')}`);
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
  const [user] = benchUsers(1);
  if (!user) throw new Error('no user');
  const gateway = await startGatewayProcess({
    temporal,
    dir,
    users: [user],
    projects: [{ slug: 'bench', upstreams: [{ alias: 'example', url: upstream.url }] }],
  });
  // One dispatcher for both sides, no per-origin connection cap: same client code path, same pool rules.
  const agent = new Agent({ keepAliveTimeout: 30_000, headersTimeout: 60_000, bodyTimeout: 60_000 });
  onCleanup('http agent', () => agent.close());
  await checkDefaults(gateway, agent, user.token);

  const cells: Cell[] = [];
  const errors: string[] = [];
  for (const scenario of scenarios({ agent, upstream, gateway, token: user.token })) {
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
    `bench:proxy  work {ms: ${opts.ms}} direct vs example.work through the gateway (serve all, default ` +
      `settings, token auth); ${opts.n} calls per side per row after ${opts.warmup} warm-up, ABBA blocks; ` +
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
  out.push(`errors: ${errors.length}; gateway log: ${log.warnings} warnings, ${log.errors} errors`);
  for (const e of errors.slice(0, 5)) out.push(`  e.g. ${e}`);
  for (const s of log.samples) out.push(`  log: ${s}`);
  const totalSeconds = round((performance.now() - t0) / 1000, 1);
  out.push(`total ${totalSeconds} s`, '');
  process.stdout.write(`${out.join('\n')}\n`);
  const json = cells.map((c) => ({
    ...c,
    direct: roundFigures(c.direct),
    gateway: roundFigures(c.gateway),
  }));
  process.stdout.write(
    `${JSON.stringify({
      bench: 'proxy',
      options: opts,
      machine: { cpus: os.cpus().length, node: process.version, loadavg: os.loadavg() },
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
