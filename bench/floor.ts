/**
 * `npm run bench:floor [-- --n 300 --ms 5 --seconds 2 --clients 32 --burst 300 --warmup 50]`
 *
 * How far the speed targets of issue 14 are from what the platform itself costs, measured side by side
 * in one run on this machine. The bench starts an in-memory Temporal dev server, the example upstream
 * (bench/upstream-process.ts), the gateway through the production entry point with default settings
 * (`node dist/src/main/serve.js all`, as bench:proxy and bench:tasks do) and two "floors", each a process
 * of its own (bench/floor-process.ts):
 *
 * - a bare Node.js proxy: node:http in, a keep-alive undici pool out, nothing else;
 * - a bare Temporal creation: update-with-start of a one-local-activity workflow from a client in the
 *   worker's process, answered with the upstream's first outcome (bench/floor-workflow.ts).
 *
 * 1. Ordinary `tools/call` (`work {ms}`, unique arguments): direct, through the bare proxy, through the
 *    gateway. The gateway's target is p50 <= 1.15x direct, p99 <= 1.3x; the bare proxy's ratio is the
 *    least any Node.js process in the path adds.
 * 2. Task creation (`slow_compute {seconds}`, task-aware) through the gateway and through the Temporal
 *    floor, against the gateway's ordinary call: the gateway's target is p50 <= 3x, p99 <= 4x; the
 *    floor's ratio is the least a creation that answers with the upstream's first outcome can cost.
 * 3. Creation throughput with --clients concurrent clients, --burst creations per side: gateway and
 *    floor, tasks per second (target >= 100/s).
 *
 * Each section runs its sides in alternating blocks (a b c c b a ...), with the CPU time the serving
 * processes used per call. Prints tables and one JSON line; the exit code is 0 whatever the ratios.
 */
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { note, runBench, startTemporal, tempDir } from './env';
import {
  benchUsers,
  buildIfNeeded,
  cpuMs,
  forkReady,
  startGatewayProcess,
  startUpstreamProcess,
} from './processes';
import type { FloorOptions } from './floor-process';
import type { RpcReply, SideSample } from './support';
import { abba, McpHttpClient, percentile, ratio, replyProblem, round, table } from './support';
import { createTask } from './task-support';

const TARGET = { ordinaryP50: 1.15, ordinaryP99: 1.3, creationP50: 3, creationP99: 4, throughput: 100 };

interface Options {
  n: number;
  ms: number;
  seconds: number;
  block: number;
  clients: number;
  burst: number;
  warmup: number;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      n: { type: 'string', default: '300' },
      ms: { type: 'string', default: '5' },
      seconds: { type: 'string', default: '2' },
      block: { type: 'string', default: '25' },
      clients: { type: 'string', default: '32' },
      burst: { type: 'string', default: '300' },
      warmup: { type: 'string', default: '50' },
    },
  });
  const num = (name: keyof typeof values): number => {
    const v = Number(values[name]);
    if (!Number.isFinite(v) || v < 0)
      throw new Error(`--${name} must be a number >= 0 (got ${values[name]})`);
    return v;
  };
  return {
    n: num('n'),
    ms: num('ms'),
    seconds: num('seconds'),
    block: Math.max(1, num('block')),
    clients: Math.max(1, num('clients')),
    burst: num('burst'),
    warmup: num('warmup'),
  };
}

interface Figures {
  count: number;
  p50: number;
  p99: number;
  perSecond: number;
  /** CPU ms per call of each counted process during this side's blocks. */
  cpu: Record<string, number>;
  errors: string[];
}

/** `abba` over any number of sides, with the CPU each named process used during each side's blocks. */
async function measure<S extends string>(
  sides: readonly S[],
  opts: { n: number; block: number; concurrency: number },
  pids: Record<string, number>,
  op: (side: S, i: number) => Promise<void>,
): Promise<Record<S, Figures>> {
  const names = Object.keys(pids);
  const cpu = Object.fromEntries(
    sides.map((s) => [s, Object.fromEntries(names.map((n) => [n, 0]))]),
  ) as Record<S, Record<string, number>>;
  let start: Record<string, number> = {};
  const samples = await abba(sides, opts, op, {
    blockStart: () => (start = Object.fromEntries(names.map((n) => [n, cpuMs(pids[n] ?? 0)]))),
    blockEnd: (side) => {
      const used: Record<string, number> = cpu[side];
      for (const n of names) used[n] = (used[n] ?? 0) + cpuMs(pids[n] ?? 0) - (start[n] ?? 0);
    },
  });
  const figures = (s: S, sample: SideSample): Figures => {
    const count = sample.latencies.length;
    return {
      count,
      p50: round(percentile(sample.latencies, 50), 2),
      p99: round(percentile(sample.latencies, 99), 2),
      perSecond: round((count / sample.wallMs) * 1000, 1),
      cpu: Object.fromEntries(names.map((n) => [n, round((cpu[s][n] ?? 0) / Math.max(1, count), 2)])),
      errors: sample.errors,
    };
  };
  return Object.fromEntries(sides.map((s) => [s, figures(s, samples[s])])) as Record<S, Figures>;
}

function check(reply: RpcReply): void {
  const problem = replyProblem(reply);
  if (problem !== undefined) throw new Error(problem);
}

async function floorCreate(url: string, agent: Agent, args: Record<string, unknown>): Promise<void> {
  const res = await request(url, {
    method: 'POST',
    body: JSON.stringify(args),
    headers: { 'content-type': 'application/json' },
    dispatcher: agent,
  });
  const text = await res.body.text();
  if (res.statusCode !== 200 || !text.includes('"resultType":"task"')) {
    throw new Error(`floor: HTTP ${res.statusCode} ${text.slice(0, 200)}`);
  }
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  note(`options ${JSON.stringify(opts)}`);
  buildIfNeeded();
  const temporal = await startTemporal();
  const dir = tempDir();
  const upstream = await startUpstreamProcess('floor-upstream');
  const [user] = benchUsers(1);
  if (!user) throw new Error('no user');
  const gateway = await startGatewayProcess({
    temporal,
    dir,
    users: [user],
    projects: [{ slug: 'bench', upstreams: [{ alias: 'example', url: upstream.url }] }],
  });
  const floor = (name: string, o: FloorOptions) => forkReady('floor-process.ts', name, o);
  const bare = await floor('bare-proxy', { mode: 'bare-proxy', upstreamUrl: upstream.url });
  const tfloor = await floor('temporal-floor', {
    mode: 'temporal',
    upstreamUrl: upstream.url,
    address: temporal.address,
    namespace: temporal.namespace,
  });
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256 });
  const endpoint = `${gateway.url}/v1/mcp/bench`;
  const direct = new McpHttpClient(upstream.url, agent, { tasks: false });
  const viaBare = new McpHttpClient(bare.url, agent, { tasks: false });
  const plain = new McpHttpClient(endpoint, agent, { tasks: false, token: user.token });
  const tasks = new McpHttpClient(endpoint, agent, { token: user.token });
  const run = randomUUID().slice(0, 8);
  const work = (side: string, i: number) => ({ ms: opts.ms, nonce: `${run}-${side}-${i}` });
  const slow = (side: string, i: number) => ({ seconds: opts.seconds, label: `${run}-${side}-${i}` });

  const ordinaryOp = async (side: 'direct' | 'bare proxy' | 'gateway', i: number, phase: string) => {
    const client = side === 'direct' ? direct : side === 'bare proxy' ? viaBare : plain;
    check(await client.callTool(side === 'gateway' ? 'example.work' : 'work', work(phase + side, i)));
  };
  const creationOp = async (
    side: 'ordinary' | 'gateway creation' | 'temporal floor',
    i: number,
    phase: string,
  ) => {
    if (side === 'ordinary') return check(await plain.callTool('example.work', work(phase + side, i)));
    if (side === 'gateway creation')
      return void (await createTask(tasks, 'example.slow_compute', slow(phase, i)));
    await floorCreate(tfloor.url, agent, slow(phase + 'floor', i));
  };

  if (opts.warmup > 0) {
    note(`warm-up: ${opts.warmup} calls per side`);
    const w = { n: opts.warmup, block: opts.warmup, concurrency: 4 };
    await abba(['direct', 'bare proxy', 'gateway'] as const, w, (s, i) => ordinaryOp(s, i, 'warm'));
    await abba(['ordinary', 'gateway creation', 'temporal floor'] as const, w, (s, i) =>
      creationOp(s, i, 'warm'),
    );
  }

  note(`1. ordinary calls: ${opts.n} per side`);
  const sides1 = ['direct', 'bare proxy', 'gateway'] as const;
  const ordinary = await measure(
    sides1,
    { n: opts.n, block: opts.block, concurrency: 1 },
    {
      upstream: upstream.pid,
      'bare proxy': bare.pid,
      gateway: gateway.pid,
    },
    (s, i) => ordinaryOp(s, i, 'measure'),
  );

  note(`2. creation: ${opts.n} per side`);
  const sides2 = ['ordinary', 'gateway creation', 'temporal floor'] as const;
  const pids2 = { gateway: gateway.pid, 'temporal floor': tfloor.pid, temporal: temporal.pid };
  const creation = await measure(sides2, { n: opts.n, block: opts.block, concurrency: 1 }, pids2, (s, i) =>
    creationOp(s, i, 'measure'),
  );

  note(`3. throughput: ${opts.burst} creations per side, ${opts.clients} clients`);
  const sides3 = ['gateway creation', 'temporal floor'] as const;
  const burst = {
    n: opts.burst,
    block: Math.max(opts.clients * 4, Math.ceil(opts.burst / 2)),
    concurrency: opts.clients,
  };
  const tput =
    opts.burst > 0 ? await measure(sides3, burst, pids2, (s, i) => creationOp(s, i, 'burst')) : undefined;

  // Report
  const o = ordinary;
  const c = creation;
  const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL');
  const cpuCells = (f: Figures, names: string[]) => names.map((n) => f.cpu[n] ?? '');
  const out: string[] = [
    '',
    `bench:floor  gateway: serve all, default settings, token auth; node ${process.version}, ` +
      `${os.cpus().length} cpus, load ${os.loadavg()[0]?.toFixed(1)}`,
    '',
    table([
      [
        `1. ordinary tools/call work ${opts.ms} ms (ms)`,
        'n',
        'p50',
        'p99',
        'x direct p50',
        'x direct p99',
        'CPU ms upstream',
        'bare proxy',
        'gateway',
      ],
      ...sides1.map((s) => [
        s,
        o[s].count,
        o[s].p50,
        o[s].p99,
        ratio(o[s].p50, o.direct.p50),
        ratio(o[s].p99, o.direct.p99),
        ...cpuCells(o[s], ['upstream', 'bare proxy', 'gateway']),
      ]),
    ]),
    `   gateway p50 ${ratio(o.gateway.p50, o.direct.p50)}x (target <= ${TARGET.ordinaryP50}): ` +
      `${verdict(ratio(o.gateway.p50, o.direct.p50) <= TARGET.ordinaryP50)}; floor (bare proxy) ` +
      `${ratio(o['bare proxy'].p50, o.direct.p50)}x; the gateway adds ${round(o.gateway.p50 - o['bare proxy'].p50, 2)} ms ` +
      `at p50 over the bare proxy`,
    '',
    table([
      [
        '2. creation (ms)',
        'n',
        'p50',
        'p99',
        'x ordinary p50',
        'x ordinary p99',
        'CPU ms gateway',
        'floor',
        'temporal',
      ],
      ...sides2.map((s) => [
        s,
        c[s].count,
        c[s].p50,
        c[s].p99,
        ratio(c[s].p50, c.ordinary.p50),
        ratio(c[s].p99, c.ordinary.p99),
        ...cpuCells(c[s], ['gateway', 'temporal floor', 'temporal']),
      ]),
    ]),
    `   gateway creation p50 ${ratio(c['gateway creation'].p50, c.ordinary.p50)}x (target <= ${TARGET.creationP50}): ` +
      `${verdict(ratio(c['gateway creation'].p50, c.ordinary.p50) <= TARGET.creationP50)}; the Temporal floor alone ` +
      `${ratio(c['temporal floor'].p50, c.ordinary.p50)}x p50, ${ratio(c['temporal floor'].p99, c.ordinary.p99)}x p99`,
  ];
  if (tput) {
    out.push(
      '',
      table([
        [
          `3. throughput, ${opts.clients} clients`,
          'n',
          'tasks/s',
          'p50 ms',
          'p99 ms',
          'CPU ms gateway',
          'floor',
          'temporal',
        ],
        ...sides3.map((s) => [
          s,
          tput[s].count,
          tput[s].perSecond,
          tput[s].p50,
          tput[s].p99,
          ...cpuCells(tput[s], ['gateway', 'temporal floor', 'temporal']),
        ]),
      ]),
      `   gateway ${tput['gateway creation'].perSecond}/s (target >= ${TARGET.throughput}): ` +
        `${verdict(tput['gateway creation'].perSecond >= TARGET.throughput)}; the Temporal floor alone ${tput['temporal floor'].perSecond}/s`,
    );
  }
  const errors = [...Object.values(o), ...Object.values(c), ...Object.values(tput ?? {})].flatMap(
    (f) => f.errors,
  );
  out.push('', `errors: ${errors.length}${errors.length > 0 ? ` (first: ${errors[0]})` : ''}`);
  process.stdout.write(`${out.join('\n')}\n`);
  const strip = (r: Record<string, Figures>) =>
    Object.fromEntries(Object.entries(r).map(([k, f]) => [k, { ...f, errors: f.errors.length }]));
  process.stdout.write(
    `${JSON.stringify({ bench: 'floor', options: opts, ordinary: strip(o), creation: strip(c), throughput: tput && strip(tput) })}\n`,
  );
}

runBench(main);
