/**
 * `npm run bench:scale-out [-- --tasks 1000 --fast 5000 --seconds 400 --poll 500 --clients 32 --window 30
 *   --sides 1,2]`
 *
 * Issue 23 item 5, scale-out shown rather than assumed: the production topology (test:cluster's: the real
 * Temporal server built from source on PostgreSQL, the gateway's store on the same PostgreSQL, one
 * process per role, `node dist/src/main/serve.js api|worker`, default settings) with one API replica and
 * one worker, then with two of each, side by side in one run (a fresh gateway database and task queue per
 * side, the same Temporal server, PostgreSQL and upstream processes). Each side:
 *
 * 1. --tasks tasks of --seconds created by --clients clients spread over the API replicas, on an upstream
 *    that suggests polling every 5 s: creations/s, p50 / p99, fair-share refusals (retried after their
 *    Retry-After, as a client should) and errors;
 * 2. --fast more on an upstream that suggests --poll ms (default 500, the gateway's floor: ten times the
 *    polls of a 5 s task), so that more polls are due than the fleet keeps up with; then --window seconds
 *    with all of them in flight: the polls the upstreams answered per second, the tasks each worker's hub
 *    holds and the watch lag (largest, and at the end: a fleet within two intervals at the end kept up).
 *    A saturated fleet's polls per second, times 5 s, is the number of tasks it keeps polled at a 5 s
 *    interval: its watch capacity;
 * 3. CPU over both measured phases: each gateway process, the Temporal server, PostgreSQL (all its
 *    processes), the upstreams and the machine as a whole (/proc/stat), which names the bound when a
 *    second replica adds little.
 *
 * Target (issue 23): two of each >= 1.8x one of each in creations/s and in watch capacity, or the named
 * bound. PASS/FAIL printed, exit code 0 either way; one JSON line last.
 */
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startPostgresDev } from '../src/tooling/postgres';
import { getFreePort } from '../src/tooling/processes';
import { ensureTemporalServer } from '../src/tooling/temporal-server';
import { setupSchema, startTemporal as startTemporalServer } from '../test/cluster/stack';
import { gatewayBasics, note, onCleanup, runBench, tempDir } from './env';
import { readFlags } from './options';
import type { GatewayProcess } from './processes';
import {
  CLOCK_TICKS,
  benchProject,
  benchUsers,
  callAndStreamAgents,
  cpuMs,
  ROOT,
  startGatewayProcess,
  startUpstreamProcess,
} from './processes';
import {
  finishReport,
  machine,
  McpHttpClient,
  metricsOf,
  metricSum,
  ratio,
  round,
  sleep,
  summarize,
  table,
} from './support';
import { createTask, effectivePollMs, many } from './task-support';

const TARGET = 1.8;
const BULK_POLL_MS = 5000;
/** How long the hubs may take to hold every task in flight before the window starts anyway. */
const SETTLE_LIMIT_MS = 180_000;
const NAMESPACE = 'taskrouter-bench';

interface Options {
  tasks: number;
  fast: number;
  seconds: number;
  poll: number;
  clients: number;
  window: number;
  /** Replicas of each role per side, in the order run. */
  sides: number[];
  /** Another built checkout whose gateway runs instead of this one's (a before side). */
  root?: string;
}

function parseOptions(argv: string[]): Options {
  const { range: num, values } = readFlags(
    argv,
    {
      tasks: '1000',
      fast: '5000',
      seconds: '400',
      poll: '500',
      clients: '32',
      window: '30',
      sides: '1,2',
      root: undefined,
    },
    'usage: npm run bench:scale-out -- [--tasks 1000] [--fast 5000] [--seconds 400] [--poll 500] [--clients 32]\n' +
      '       [--window 30] [--sides 1,2]\n' +
      '  --tasks    tasks created on each side on an upstream polled every 5 s (creations/s)\n' +
      '  --fast     tasks created next on an upstream polled every --poll ms (the watch capacity)\n' +
      '  --seconds  how long each runs at the upstream: longer than creating them all and the window\n' +
      '  --poll     the poll interval the upstream suggests, ms (short: more polls due than one worker keeps up with)\n' +
      '  --clients  clients creating tasks at once, spread over the API replicas\n' +
      '  --window   seconds of polling measured with every task in flight\n' +
      '  --sides    replicas of each role per side, in the order run (1,2: one of each, then two)\n' +
      "  --root     run another built checkout's gateway (its dist/; not built here)\n",
  );
  const sides = (values.sides ?? '').split(',').map(Number);
  if (sides.length === 0 || sides.some((n) => !Number.isInteger(n) || n < 1)) {
    throw new Error('--sides takes whole numbers from 1, comma-separated');
  }
  return {
    tasks: Math.floor(num('tasks', 1)),
    fast: Math.floor(num('fast', 0)),
    seconds: num('seconds', 1),
    poll: Math.floor(num('poll', 1)),
    clients: Math.floor(num('clients', 1)),
    window: num('window', 1),
    sides,
    ...(values.root !== undefined && { root: values.root }),
  };
}

/**
 * CPU ms of a process and its direct children, the ended ones included (PostgreSQL's backends are children
 * of its postmaster, and a backend that ends moves its time to the postmaster's cutime and cstime).
 */
function treeCpuMs(root: number): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const own = Number(fields[11]) + Number(fields[12]);
      // The root's own time, and its ended children's (cutime, cstime); a live child's own time.
      if (Number(entry) === root) total += own + Number(fields[13]) + Number(fields[14]);
      else if (Number(fields[1]) === root) total += own;
    } catch {
      // ended meanwhile
    }
  }
  return (total * 1000) / CLOCK_TICKS;
}

/** The machine's busy and total CPU ticks so far (/proc/stat: everything but idle and iowait is busy). */
function machineTicks(): { busy: number; total: number } {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0);
  return { busy: total - (fields[3] ?? 0) - (fields[4] ?? 0), total };
}

/** CPU use between `start()` and `read()`, in % of one core per process group and of the machine's cores. */
function cpuMeter(groups: Record<string, () => number>) {
  let at = 0;
  let from: Record<string, number> = {};
  let ticks = machineTicks();
  return {
    start() {
      at = performance.now();
      from = Object.fromEntries(Object.entries(groups).map(([k, f]) => [k, f()]));
      ticks = machineTicks();
    },
    read(): Record<string, number> {
      const ms = performance.now() - at;
      const now = machineTicks();
      const use = Object.fromEntries(
        Object.entries(groups).map(([k, f]) => [k, round((100 * (f() - (from[k] ?? 0))) / ms, 0)]),
      );
      return { ...use, machine: round((100 * (now.busy - ticks.busy)) / (now.total - ticks.total), 0) };
    },
  };
}

interface SideResult {
  label: string;
  replicas: number;
  created: number;
  errors: number;
  refusedEarly: number;
  createdPerSecond: number;
  creationP50: number;
  creationP99: number;
  inFlight: number;
  pollsDuePerSecond: number;
  pollsPerSecond: number;
  hubTasks: number[];
  maxLagSeconds: number;
  /** From the last creation until the hubs held every task in flight. */
  settleSeconds: number;
  endLagSeconds: number;
  cpuCreating: Record<string, number>;
  cpuPolling: Record<string, number>;
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const t0 = performance.now();
  const errors: string[] = [];
  const logs: Array<ReturnType<GatewayProcess['log']>> = [];
  const tools = await ensureTemporalServer({ dir: path.join(ROOT, '.tools', 'temporal-server'), log: note });
  const postgres = await startPostgresDev({ settings: { max_connections: 400 } });
  onCleanup('postgres', () => postgres.stop());
  await setupSchema(tools, postgres);
  const { server, address } = await startTemporalServer(tools, postgres);
  onCleanup('temporal server', () => server.stop());
  note(`Temporal server pid ${server.pid} at ${address}, PostgreSQL pid ${postgres.pid}`);
  // `bulk` suggests the usual 5 s (the creation phase), `fast` --poll ms (the watch phase).
  const [bulk, fast] = await Promise.all([
    startUpstreamProcess('scale-out-bulk', { pollIntervalMs: BULK_POLL_MS }),
    startUpstreamProcess('scale-out-fast', { pollIntervalMs: opts.poll }),
  ]);
  const polls = async () => (await bulk.stats()).tasksGet + (await fast.stats()).tasksGet;
  const pollMs = effectivePollMs(opts.poll);
  const { agent } = callAndStreamAgents();

  const results: SideResult[] = [];
  for (const [i, n] of opts.sides.entries()) results.push(await runSide(i, n));

  /** `replicas` API replicas and as many workers. */
  async function runSide(index: number, replicas: number): Promise<SideResult> {
    const label = `${replicas} api + ${replicas} worker${replicas > 1 ? 's' : ''}`;
    note(`side ${label}: starting`);
    const database = `scale_out_${index}`;
    const admin = new pg.Client({ connectionString: postgres.url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    await admin.end();
    const dir = tempDir();
    const temporal = { address, namespace: NAMESPACE };
    const basics = gatewayBasics(temporal, dir);
    const users = benchUsers(1);
    const projects = [benchProject({ bulk, fast })];
    const processes: Array<GatewayProcess & { role: 'api' | 'worker'; healthPort: number }> = [];
    // One at a time: the first applies the bootstrap file, the others find it applied.
    for (const role of [...Array<'api'>(replicas).fill('api'), ...Array<'worker'>(replicas).fill('worker')]) {
      const healthPort = await getFreePort();
      const gateway = await startGatewayProcess({
        temporal,
        dir,
        users,
        projects,
        role,
        basics,
        ...(opts.root !== undefined && { root: opts.root }),
        sections: {
          store: { postgresUrl: `postgres://postgres@${postgres.host}:${postgres.port}/${database}` },
          health: { port: healthPort },
        },
      });
      processes.push({ ...gateway, role, healthPort });
    }
    const [user] = users;
    if (!user) throw new Error('no user');
    const clients = processes
      .filter((p) => p.role === 'api')
      .map((p) => new McpHttpClient(`${p.url}/v1/mcp/bench`, agent, { token: user.token }));
    const workers = processes.filter((p) => p.role === 'worker');
    const meter = cpuMeter({
      ...Object.fromEntries(processes.map((p, k) => [`${p.role}-${k}`, () => cpuMs(p.pid)])),
      temporal: () => cpuMs(server.pid),
      postgres: () => treeCpuMs(postgres.pid),
      upstreams: () => cpuMs(bulk.pid) + cpuMs(fast.pid),
    });

    note(`side ${label}: warm-up`);
    const warm = await many(10 * clients.length, 4, (k) =>
      createTask(clients[k % clients.length]!, 'bulk.slow_compute', { seconds: 0 }),
    );
    if (warm.errors.length > 0) throw new Error(`warm-up failed: ${warm.errors[0]}`);

    note(`side ${label}: creating ${opts.tasks} tasks of ${opts.seconds} s with ${opts.clients} clients`);
    const refusedEarly = { count: 0 };
    const ends: number[] = [];
    const create = (tool: string, count: number, tag: string) =>
      many(count, opts.clients, async (k) => {
        const seconds = round(opts.seconds + Math.random() * 5, 3);
        const c = await createTask(
          clients[k % clients.length]!,
          tool,
          { seconds, label: `out-${index}-${tag}-${k}` },
          refusedEarly,
        );
        ends.push(c.createdAtMs + seconds * 1000);
        return c;
      });
    meter.start();
    const creation = await create('bulk.slow_compute', opts.tasks, 'bulk');
    const cpuCreating = meter.read();
    const latency = summarize(creation.ok.map((c) => c.latencyMs));
    const createdPerSecond = creation.ok.length / (creation.wallMs / 1000);
    note(`side ${label}: ${creation.ok.length} created in ${round(creation.wallMs / 1000, 1)} s`);

    note(`side ${label}: creating ${opts.fast} tasks polled every ${pollMs} ms`);
    const fastCreation = await create('fast.slow_compute', opts.fast, 'fast');
    // Until the hubs hold every task in flight (each task's workflow enlists it once created; a backlog
    // of workflow tasks delays that), then two intervals, then the window.
    const settleStart = performance.now();
    for (;;) {
      const held = await hubTasksOf(workers);
      const inFlightNow = ends.filter((end) => end > Date.now()).length;
      if (held.reduce((a, b) => a + b, 0) >= 0.99 * inFlightNow) break;
      if (performance.now() - settleStart > SETTLE_LIMIT_MS) {
        note(
          `side ${label}: the hubs hold ${held.join(' + ')} of ${inFlightNow} after ${SETTLE_LIMIT_MS / 1000} s`,
        );
        break;
      }
      await sleep(1000);
    }
    const settleSeconds = round((performance.now() - settleStart) / 1000, 0);
    await sleep(2 * pollMs + 2000);
    const polls0 = await polls();
    const w0 = performance.now();
    meter.start();
    const lags: number[] = [];
    while (performance.now() - w0 < opts.window * 1000) {
      await sleep(2000);
      for (const w of workers)
        lags.push(metricSum(await metricsOf(w), 'taskrouter_watch_lag_seconds', 'max') ?? 0);
    }
    const pollsPerSecond = ((await polls()) - polls0) / ((performance.now() - w0) / 1000);
    const cpuPolling = meter.read();
    const inFlight = ends.filter((end) => end > Date.now()).length;
    const hubTasks = await hubTasksOf(workers);
    if (ends.some((end) => end < Date.now()))
      note(`side ${label}: some tasks ended within the window (--seconds is short)`);
    note(`side ${label}: ${round(pollsPerSecond, 0)} polls/s; stopping its processes`);
    await Promise.all(processes.map((p) => p.stop()));
    errors.push(...creation.errors, ...fastCreation.errors);
    logs.push(...processes.map((p) => p.log()));
    note(
      `side ${label}: gateway log ${logs
        .slice(-processes.length)
        .map((l) => `${l.warnings} warnings, ${l.errors} errors`)
        .join('; ')}`,
    );
    return {
      label,
      replicas,
      created: creation.ok.length,
      errors: creation.errors.length + fastCreation.errors.length,
      refusedEarly: refusedEarly.count,
      createdPerSecond: round(createdPerSecond, 1),
      creationP50: round(latency.p50, 0),
      creationP99: round(latency.p99, 0),
      inFlight,
      pollsDuePerSecond: round(
        ends.slice(0, creation.ok.length).filter((end) => end > Date.now()).length / (BULK_POLL_MS / 1000) +
          ends.slice(creation.ok.length).filter((end) => end > Date.now()).length / (pollMs / 1000),
        0,
      ),
      pollsPerSecond: round(pollsPerSecond, 0),
      hubTasks,
      maxLagSeconds: round(Math.max(0, ...lags), 1),
      settleSeconds,
      endLagSeconds: round(
        lags.slice(-workers.length).reduce((a, b) => Math.max(a, b), 0),
        1,
      ),
      cpuCreating,
      cpuPolling,
    };
  }

  const one = results.find((r) => r.replicas === 1) ?? results[0];
  const two = results.find((r) => r.replicas === 2) ?? results[results.length - 1];
  if (!one || !two) throw new Error('no side ran');
  const creationRatio = ratio(two.createdPerSecond, one.createdPerSecond);
  // Capacity is what the fleet polls when more is due than it keeps up with; a side that kept up with
  // everything due has at least that capacity (the ratio is then a lower bound).
  const capacity = (r: SideResult) => r.pollsPerSecond * 5;
  const capacityRatio = ratio(capacity(two), capacity(one));
  // A fleet that made nine tenths of the polls due (tasks / their interval; each poll's own latency adds to
  // the interval) kept up: it was not saturated, and what it polled is a lower bound of its capacity. A
  // saturated hub polls its tasks round, oldest first, so their lag stays bounded rather than growing.
  const keptUp = (r: SideResult) => r.pollsPerSecond >= 0.9 * r.pollsDuePerSecond;
  const cpuLine = (c: Record<string, number>) =>
    Object.entries(c)
      .map(([k, v]) => `${k} ${v}%`)
      .join(', ');
  const out: string[] = [
    '',
    `bench:scale-out  ${opts.tasks} + ${opts.fast} tasks of ${opts.seconds} s per side on the real Temporal server (PostgreSQL); ` +
      `upstreams suggest polling every ${BULK_POLL_MS} ms (--tasks) and ${opts.poll} ms (--fast, effective ${pollMs}); gateway: serve api|worker, default ` +
      `settings, store on PostgreSQL; node ${process.version}, ${os.cpus().length} cpus, load ${os.loadavg()[0]?.toFixed(1)}`,
    '',
    table([
      [
        'side',
        'created',
        'refused early',
        'errors',
        'creations/s',
        'p50 / p99 ms',
        'in flight',
        'polls due/s',
        'polls/s',
        'capacity at 5 s',
        'hub tasks',
        'max lag s',
      ],
      ...results.map((r) => [
        r.label,
        r.created,
        r.refusedEarly,
        r.errors,
        r.createdPerSecond,
        `${r.creationP50} / ${r.creationP99}`,
        r.inFlight,
        r.pollsDuePerSecond,
        r.pollsPerSecond,
        `${keptUp(r) ? '>= ' : ''}${capacity(r)}`,
        r.settleSeconds,
        r.hubTasks.join(' + '),
        `${r.maxLagSeconds} / ${r.endLagSeconds}`,
      ]),
    ]),
    '',
    ...results.flatMap((r) => [
      `CPU (% of a core; machine: % of all ${os.cpus().length}) ${r.label}, creating: ${cpuLine(r.cpuCreating)}`,
      `CPU ${r.label}, polling: ${cpuLine(r.cpuPolling)}`,
    ]),
    '',
  ];
  const bound = (c: Record<string, number>) =>
    (c['machine'] ?? 0) >= 90 ? `bound: the machine's CPU (${c['machine']}% busy)` : 'not CPU-bound';
  const verdict = (name: string, value: number, c: Record<string, number>, lowerBound = false) =>
    `${name}: two of each / one of each = ${lowerBound ? '>= ' : ''}${value} (target >= ${TARGET}): ` +
    `${value >= TARGET ? 'PASS' : `FAIL, ${bound(c)}`}`;
  if (one !== two) {
    out.push(verdict('creations/s', creationRatio, two.cpuCreating));
    out.push(
      keptUp(one)
        ? `watch capacity: not measured, one of each kept up with every poll (raise --fast)`
        : verdict('watch capacity', capacityRatio, two.cpuPolling, keptUp(two)),
    );
  }
  const totalSeconds = finishReport(
    out,
    { count: errors.length, examples: errors },
    {
      warnings: logs.reduce((a, l) => a + l.warnings, 0),
      errors: logs.reduce((a, l) => a + l.errors, 0),
      samples: logs.flatMap((l) => l.samples),
    },
    t0,
  );
  process.stdout.write(
    `${JSON.stringify({ bench: 'scale-out', options: opts, machine: machine(), results, creationRatio, capacityRatio, totalSeconds })}\n`,
  );
}

/** The tasks each worker's hub holds (`taskrouter_watch_hub_tasks` on its health port). */
function hubTasksOf(workers: ReadonlyArray<{ healthPort: number }>): Promise<number[]> {
  return Promise.all(
    workers.map(async (w) => metricSum(await metricsOf(w), 'taskrouter_watch_hub_tasks') ?? 0),
  );
}

runBench(main);
