/**
 * `npm run bench:proxy [-- --n 2000 --concurrency 4 --ms 5 --block 50 --warmup 200]`
 *
 * Overhead of the gateway on ordinary (non-task) `tools/call`s. Starts an in-memory Temporal dev server
 * (the API role's client needs one, though no task runs), the example upstream and the gateway (API role
 * only, temp SQLite store, project `bench` with namespacing off). The same client, declaring no Tasks
 * extension, calls the upstream's read-only `work {ms}` tool directly and through the gateway:
 *
 * - cache miss: every call carries a unique extra `nonce` argument (the upstream ignores unknown
 *   arguments), so the gateway's result cache never answers and each call goes upstream;
 * - cache hit: the same arguments every time, so after the first call the gateway answers from its
 *   cache (checked on every reply: `_meta["com.taskrouter/cache"] === "hit"`); the direct side still
 *   does the work, so this ratio shows what the cache saves.
 *
 * Direct and gateway run in alternating blocks of --block requests (ABBA order, so drift and machine
 * noise hit both sides alike), each block with --concurrency calls in flight. Latency is per request;
 * requests per second is a side's requests over the summed wall time of its blocks. Everything runs in
 * this one process (client, gateway, upstream), like bench:tasks.
 *
 * Prints a table, PASS/FAIL against the targets for a cache miss (p50 ratio <= 1.15, p99 ratio <= 1.3;
 * never a non-zero exit for a miss) and, last, one JSON line with every figure. Leaves no processes behind.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { Agent } from 'undici';
import { startExampleUpstream } from '../examples/upstream/server';
import { parseConfig } from '../src/config/config';
import { CACHE_META_KEY } from '../src/gateway/gateway';
import { startRuntime } from '../src/main/runtime';
import { gatewayBasics, note, onCleanup, runBench, startTemporal, tempDir } from './env';
import type { RpcReply, Summary } from './support';
import {
  CountingLogSink,
  mapLimit,
  McpHttpClient,
  percentile,
  ratio,
  round,
  summarize,
  table,
} from './support';

const TARGET = { p50: 1.15, p99: 1.3 };
const TOOL = 'work';

interface Options {
  n: number;
  concurrency: number;
  ms: number;
  block: number;
  warmup: number;
  scenarios: Scenario[];
}

type Scenario = 'miss' | 'hit';
type Side = 'direct' | 'gateway';

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      n: { type: 'string', default: '2000' },
      concurrency: { type: 'string', default: '4' },
      ms: { type: 'string', default: '5' },
      block: { type: 'string', default: '50' },
      warmup: { type: 'string', default: '200' },
      scenario: { type: 'string', default: 'miss,hit' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(
      'usage: npm run bench:proxy -- [--n 2000] [--concurrency 4] [--ms 5] [--block 50] [--warmup 200]\n' +
        '       [--scenario miss,hit]\n',
    );
    process.exit(0);
  }
  const num = (name: string, raw: string, min: number): number => {
    const v = Number(raw);
    if (!Number.isFinite(v) || v < min) throw new Error(`--${name} must be a number >= ${min} (got ${raw})`);
    return v;
  };
  const scenarios = values.scenario.split(',').map((s) => s.trim());
  for (const s of scenarios) {
    if (s !== 'miss' && s !== 'hit') throw new Error(`--scenario must list miss and/or hit (got ${s})`);
  }
  return {
    n: Math.floor(num('n', values.n, 1)),
    concurrency: Math.floor(num('concurrency', values.concurrency, 1)),
    ms: num('ms', values.ms, 0),
    block: Math.floor(num('block', values.block, 1)),
    warmup: Math.floor(num('warmup', values.warmup, 0)),
    scenarios: scenarios as Scenario[],
  };
}

// ---------------------------------------------------------------------------------------------------
// Measurement

interface SideSample {
  latencies: number[];
  wallMs: number;
  errors: string[];
  /** Replies carrying `_meta["com.taskrouter/cache"] === "hit"`. */
  cacheHits: number;
}

interface SideResult extends Summary {
  /** Unrounded, for the ratios. */
  raw: { p50: number; p99: number; mean: number; rps: number };
  rps: number;
  errors: number;
  cacheHits: number;
}

interface ScenarioResult {
  scenario: Scenario;
  direct: SideResult;
  gateway: SideResult;
  ratio: { p50: number; p99: number; mean: number; rps: number };
}

const emptySample = (): SideSample => ({ latencies: [], wallMs: 0, errors: [], cacheHits: 0 });

/** Why a reply is not a successful `work` result, or undefined when it is one. */
function replyProblem(reply: RpcReply): string | undefined {
  if (reply.error) return `HTTP ${reply.status} error ${reply.error.code}: ${reply.error.message}`;
  if (reply.status !== 200 || !reply.result) return `HTTP ${reply.status} without a result`;
  if (reply.result.isError === true) return `tool error: ${JSON.stringify(reply.result.content)}`;
  return undefined;
}

function isCacheHit(reply: RpcReply): boolean {
  const meta = reply.result?._meta as Record<string, unknown> | undefined;
  return meta?.[CACHE_META_KEY] === 'hit';
}

/** One block: `count` calls to one side with `concurrency` in flight; adds to that side's sample. */
async function runBlock(
  client: McpHttpClient,
  count: number,
  concurrency: number,
  args: (i: number) => Record<string, unknown>,
  into: SideSample,
): Promise<void> {
  const started = performance.now();
  await mapLimit(
    Array.from({ length: count }, (_, i) => i),
    concurrency,
    async (i) => {
      const t0 = performance.now();
      let reply: RpcReply;
      try {
        reply = await client.callTool(TOOL, args(i));
      } catch (err) {
        into.errors.push(`transport: ${err instanceof Error ? err.message : String(err)}`);
        return;
      }
      const latency = performance.now() - t0;
      const problem = replyProblem(reply);
      if (problem !== undefined) {
        into.errors.push(problem);
        return;
      }
      into.latencies.push(latency);
      if (isCacheHit(reply)) into.cacheHits++;
    },
  );
  into.wallMs += performance.now() - started;
}

/**
 * `n` calls per side in alternating blocks, ABBA (direct, gateway, gateway, direct, ...), so a slow
 * stretch of the machine lands on both sides.
 */
async function interleaved(
  clients: Record<Side, McpHttpClient>,
  n: number,
  opts: Options,
  args: (side: Side, i: number) => Record<string, unknown>,
): Promise<Record<Side, SideSample>> {
  const samples: Record<Side, SideSample> = { direct: emptySample(), gateway: emptySample() };
  const done: Record<Side, number> = { direct: 0, gateway: 0 };
  for (let b = 0; done.direct < n || done.gateway < n; b++) {
    const order: Side[] = b % 2 === 0 ? ['direct', 'gateway'] : ['gateway', 'direct'];
    for (const side of order) {
      const count = Math.min(opts.block, n - done[side]);
      if (count <= 0) continue;
      const offset = done[side];
      await runBlock(clients[side], count, opts.concurrency, (i) => args(side, offset + i), samples[side]);
      done[side] += count;
    }
  }
  return samples;
}

function sideResult(s: SideSample): SideResult {
  const rps = s.wallMs > 0 ? (s.latencies.length / s.wallMs) * 1000 : Number.NaN;
  const mean = s.latencies.reduce((a, b) => a + b, 0) / s.latencies.length;
  return {
    ...summarize(s.latencies),
    raw: { p50: percentile(s.latencies, 50), p99: percentile(s.latencies, 99), mean, rps },
    rps: round(rps, 0),
    errors: s.errors.length,
    cacheHits: s.cacheHits,
  };
}

async function runScenario(
  scenario: Scenario,
  clients: Record<Side, McpHttpClient>,
  opts: Options,
): Promise<{ result: ScenarioResult; errors: string[] }> {
  const run = randomUUID().slice(0, 8);
  // Miss: a nonce unique per call and side (the upstream ignores it; the cache key covers it).
  // Hit: identical arguments every time; the warm-up's first gateway call fills the cache.
  const args =
    scenario === 'miss'
      ? (phase: string) => (side: Side, i: number) => ({ ms: opts.ms, nonce: `${run}-${phase}-${side}-${i}` })
      : () => () => ({ ms: opts.ms });
  if (opts.warmup > 0) {
    note(`${scenario}: warm-up, ${opts.warmup} calls per side`);
    await interleaved(clients, opts.warmup, opts, args('warmup'));
  }
  note(`${scenario}: ${opts.n} calls per side, concurrency ${opts.concurrency}, blocks of ${opts.block}`);
  const samples = await interleaved(clients, opts.n, opts, args('measure'));
  const direct = sideResult(samples.direct);
  const gateway = sideResult(samples.gateway);
  const errors = [...samples.direct.errors, ...samples.gateway.errors];
  if (scenario === 'hit' && gateway.cacheHits !== gateway.count) {
    errors.push(`cache hit: only ${gateway.cacheHits} of ${gateway.count} gateway replies were cache hits`);
  }
  if (scenario === 'miss' && gateway.cacheHits > 0) {
    errors.push(`cache miss: ${gateway.cacheHits} gateway replies were cache hits`);
  }
  return {
    result: {
      scenario,
      direct,
      gateway,
      ratio: {
        p50: ratio(gateway.raw.p50, direct.raw.p50),
        p99: ratio(gateway.raw.p99, direct.raw.p99),
        mean: ratio(gateway.raw.mean, direct.raw.mean),
        rps: ratio(gateway.raw.rps, direct.raw.rps),
      },
    },
    errors,
  };
}

// ---------------------------------------------------------------------------------------------------
// Main

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const t0 = performance.now();

  const temporal = await startTemporal();
  const dir = tempDir();
  const upstream = await startExampleUpstream({ name: 'bench-proxy-upstream' });
  onCleanup('upstream', () => upstream.close());

  const config = parseConfig({
    ...gatewayBasics(temporal, dir),
    projects: [
      {
        slug: 'bench',
        authMode: 'anonymous',
        namespacing: false,
        upstreams: [{ alias: 'example', url: upstream.url }],
      },
    ],
  });
  const logSink = new CountingLogSink();
  const logger = pino({ level: process.env['BENCH_LOG_LEVEL'] ?? 'warn' }, logSink);
  // Ordinary calls need the API role only; its Temporal client connects but starts nothing.
  const runtime = await startRuntime({ config, logger, api: true, worker: false });
  onCleanup('gateway runtime', () => runtime.close());
  if (runtime.url === undefined) throw new Error('gateway API did not start');

  // One dispatcher for both sides, no per-origin connection cap: same client code path, same pool rules.
  const agent = new Agent({ keepAliveTimeout: 30_000, headersTimeout: 60_000, bodyTimeout: 60_000 });
  onCleanup('http agent', () => agent.close());
  const clients: Record<Side, McpHttpClient> = {
    direct: new McpHttpClient(upstream.url, agent, { tasks: false }),
    gateway: new McpHttpClient(`${runtime.url}/v1/mcp/bench`, agent, { tasks: false }),
  };

  const results: ScenarioResult[] = [];
  const errors: string[] = [];
  for (const scenario of opts.scenarios) {
    const r = await runScenario(scenario, clients, opts);
    results.push(r.result);
    errors.push(...r.errors);
  }

  const out: string[] = [''];
  out.push(
    `bench:proxy  tool ${TOOL} {ms: ${opts.ms}}, ${opts.n} calls per side after ${opts.warmup} warm-up, ` +
      `concurrency ${opts.concurrency}, blocks of ${opts.block} (ABBA)  ` +
      `node ${process.version}, ${os.cpus().length} cpus`,
  );
  out.push('');
  const rows: Array<Array<string | number>> = [
    ['latency (ms)', 'n', 'p50', 'p99', 'mean', 'max', 'req/s', 'cache hits'],
  ];
  for (const r of results) {
    for (const side of ['direct', 'gateway'] as const) {
      const s = r[side];
      rows.push([`${r.scenario} ${side}`, s.count, s.p50, s.p99, s.mean, s.max, s.rps, s.cacheHits]);
    }
    rows.push([
      `${r.scenario} gateway/direct`,
      '',
      r.ratio.p50,
      r.ratio.p99,
      r.ratio.mean,
      '',
      r.ratio.rps,
      '',
    ]);
  }
  out.push(table(rows));
  out.push('');
  const miss = results.find((r) => r.scenario === 'miss');
  const verdict: Record<string, 'PASS' | 'FAIL'> = {};
  if (miss) {
    verdict.p50 = miss.ratio.p50 <= TARGET.p50 ? 'PASS' : 'FAIL';
    verdict.p99 = miss.ratio.p99 <= TARGET.p99 ? 'PASS' : 'FAIL';
    out.push(
      `cache miss p50 ratio ${miss.ratio.p50} (target <= ${TARGET.p50}): ${verdict.p50}; ` +
        `p99 ratio ${miss.ratio.p99} (target <= ${TARGET.p99}): ${verdict.p99}`,
    );
  }
  out.push(`errors: ${errors.length}; gateway log: ${logSink.warnings} warnings, ${logSink.errors} errors`);
  for (const e of errors.slice(0, 5)) out.push(`  e.g. ${e}`);
  for (const s of logSink.samples) out.push(`  log: ${s}`);
  const totalSeconds = round((performance.now() - t0) / 1000, 1);
  out.push(`total ${totalSeconds} s`, '');
  process.stdout.write(`${out.join('\n')}\n`);
  process.stdout.write(
    `${JSON.stringify({ options: opts, results, target: TARGET, verdict, errors: errors.length, totalSeconds })}\n`,
  );
}

runBench(main);
