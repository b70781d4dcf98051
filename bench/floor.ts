/**
 * `npm run bench:floor [-- --n 300 --ms 5 --concurrency 1,64 --users 4
 *   --sections ordinary,declaring,creation,throughput
 *   --seconds 2 --clients 32 --burst 300 --warmup 50]`
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
 *    gateway, at each `--concurrency` level (calls in flight). The gateway's targets (issue 23): at 1 in
 *    flight, p50 at most 0.5 ms over the bare proxy's; at 64 in flight, at least 0.8x the bare proxy's
 *    requests per second. The bare proxy is the least any Node.js process in the path adds. The gateway's
 *    calls come from `--users` users in turn (a token each), as several clients would: one caller may
 *    hold only `fairShare.calls.perCaller` (64) requests in flight, so one token at 64 in flight would
 *    measure the gateway at its per-caller bound (the settings stay the defaults).
 * 1b. `declaring`: the same ordinary call (`work {ms}`, answered at once) from a client that declares the
 *    Tasks extension, against the same call from a client without Tasks: through this gateway (the first
 *    call made by the API, `tasks.firstCallFrom: api`, the default) and through a second gateway process
 *    that makes it from the worker (`firstCallFrom: worker`, update-with-start). Target (issue 23): the
 *    declaring client's p50 at most 1.3x the one without Tasks.
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
import { Agent, request } from 'undici';
import { note, runBench, startTemporal, tempDir } from './env';
import { benchUsers, buildIfNeeded, forkReady, startGatewayProcess, startUpstreamProcess } from './processes';
import type { FloorOptions } from './floor-process';
import type { Figures } from './measure';
import { measure } from './measure';
import type { RpcReply } from './support';
import { abba, McpHttpClient, ratio, replyProblem, round, table } from './support';
import { createTask } from './task-support';

import { parseOptions, TARGET } from './floor-options';
import type { Section } from './floor-options';

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

type OrdinarySide = 'direct' | 'bare proxy' | 'gateway' | 'gateway before';
const ORDINARY_SIDES: readonly OrdinarySide[] = ['direct', 'bare proxy', 'gateway'];
type DeclaringSide = 'without Tasks' | 'declaring, api path' | 'declaring, worker path';
const DECLARING_SIDES: readonly DeclaringSide[] = [
  'without Tasks',
  'declaring, api path',
  'declaring, worker path',
];

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  note(`options ${JSON.stringify(opts)}`);
  const wants = (s: Section) => opts.sections.includes(s);
  buildIfNeeded();
  const temporal = await startTemporal();
  const dir = tempDir();
  const upstream = await startUpstreamProcess('floor-upstream');
  const users = benchUsers(opts.users);
  const gateway = await startGatewayProcess({
    temporal,
    dir,
    users,
    projects: [{ slug: 'bench', upstreams: [{ alias: 'example', url: upstream.url }] }],
  });
  const before = opts.oldRoot
    ? await startGatewayProcess({
        temporal,
        dir: tempDir(),
        users,
        projects: [{ slug: 'bench', upstreams: [{ alias: 'example', url: upstream.url }] }],
        root: opts.oldRoot,
      })
    : undefined;
  // The earlier path for the declaring section: the worker makes every declaring call's first call.
  const workerPath = wants('declaring')
    ? await startGatewayProcess({
        temporal,
        dir: tempDir(),
        users,
        projects: [{ slug: 'bench', upstreams: [{ alias: 'example', url: upstream.url }] }],
        sections: { tasks: { firstCallFrom: 'worker' } },
      })
    : undefined;
  const sides1: readonly OrdinarySide[] = before ? [...ORDINARY_SIDES, 'gateway before'] : ORDINARY_SIDES;
  const floor = (name: string, o: FloorOptions) => forkReady('floor-process.ts', name, o);
  const bare = await floor('bare-proxy', { mode: 'bare-proxy', upstreamUrl: upstream.url });
  const tfloor =
    wants('creation') || wants('throughput')
      ? await floor('temporal-floor', {
          mode: 'temporal',
          upstreamUrl: upstream.url,
          address: temporal.address,
          namespace: temporal.namespace,
        })
      : undefined;
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256 });
  const endpoint = `${gateway.url}/v1/mcp/bench`;
  // The gateway's calls come from the users in turn: several callers, each within its fair share.
  let turn = 0;
  const nextToken = () => (users[turn++ % users.length] as (typeof users)[number]).token;
  const direct = new McpHttpClient(upstream.url, agent, { tasks: false });
  const viaBare = new McpHttpClient(bare.url, agent, { tasks: false });
  const plain = new McpHttpClient(endpoint, agent, { tasks: false, token: nextToken });
  const plainBefore =
    before && new McpHttpClient(`${before.url}/v1/mcp/bench`, agent, { tasks: false, token: nextToken });
  // Creations from the users in turn as well: one caller may hold only
  // `fairShare.creations.inFlightPerCaller` (16) creations at once, fewer than --clients (32).
  const tasks = new McpHttpClient(endpoint, agent, { token: nextToken });
  const declaringApi = new McpHttpClient(endpoint, agent, { token: nextToken });
  const declaringWorker =
    workerPath && new McpHttpClient(`${workerPath.url}/v1/mcp/bench`, agent, { token: nextToken });
  const run = randomUUID().slice(0, 8);
  const work = (side: string, i: number) => ({ ms: opts.ms, nonce: `${run}-${side}-${i}` });
  const slow = (side: string, i: number) => ({ seconds: opts.seconds, label: `${run}-${side}-${i}` });

  const ordinaryOp = async (side: OrdinarySide, i: number, phase: string) => {
    const client =
      side === 'direct'
        ? direct
        : side === 'bare proxy'
          ? viaBare
          : side === 'gateway before' && plainBefore
            ? plainBefore
            : plain;
    const tool = side === 'gateway' || side === 'gateway before' ? 'example.work' : 'work';
    check(await client.callTool(tool, work(phase + side, i)));
  };
  const creationOp = async (
    side: 'ordinary' | 'gateway creation' | 'temporal floor',
    i: number,
    phase: string,
  ) => {
    if (side === 'ordinary') return check(await plain.callTool('example.work', work(phase + side, i)));
    if (side === 'gateway creation')
      return void (await createTask(tasks, 'example.slow_compute', slow(phase, i)));
    if (!tfloor) throw new Error('no Temporal floor started');
    await floorCreate(tfloor.url, agent, slow(phase + 'floor', i));
  };

  const declaringOp = async (side: DeclaringSide, i: number, phase: string) => {
    const client =
      side === 'without Tasks' ? plain : side === 'declaring, api path' ? declaringApi : declaringWorker;
    if (!client) throw new Error('no worker-path gateway started');
    const reply = await client.callTool('example.work', work(phase + side, i));
    check(reply);
    if (reply.result?.['resultType'] === 'task') throw new Error(`${side}: a task, not the answer`);
  };

  if (opts.warmup > 0) {
    note(`warm-up: ${opts.warmup} calls per side`);
    const w = { n: opts.warmup, block: opts.warmup, concurrency: 4 };
    await abba(sides1, w, (s, i) => ordinaryOp(s, i, 'warm'));
    if (workerPath) await abba(DECLARING_SIDES, w, (s, i) => declaringOp(s, i, 'warm'));
    if (tfloor)
      await abba(['ordinary', 'gateway creation', 'temporal floor'] as const, w, (s, i) =>
        creationOp(s, i, 'warm'),
      );
  }

  const ordinary: Array<{ concurrency: number; figures: Record<OrdinarySide, Figures> }> = [];
  const pids1: Record<string, number> = {
    upstream: upstream.pid,
    'bare proxy': bare.pid,
    gateway: gateway.pid,
    ...(before && { 'gateway before': before.pid }),
  };
  if (wants('ordinary')) {
    for (const concurrency of opts.concurrency) {
      note(`1. ordinary calls: ${opts.n} per side, ${concurrency} in flight`);
      const figures = await measure(
        sides1,
        { n: opts.n, block: Math.max(opts.block, concurrency * 4), concurrency },
        pids1,
        (s, i) => ordinaryOp(s, i, `measure${concurrency}`),
      );
      ordinary.push({ concurrency, figures });
    }
  }

  let declaring: Record<DeclaringSide, Figures> | undefined;
  if (workerPath) {
    note(`1b. declaring client, upstream answers at once: ${opts.n} per side, 1 in flight`);
    declaring = await measure(
      DECLARING_SIDES,
      { n: opts.n, block: opts.block, concurrency: 1 },
      { gateway: gateway.pid, 'worker-path gateway': workerPath.pid, temporal: temporal.pid },
      (s, i) => declaringOp(s, i, 'measure'),
    );
  }

  const sides2 = ['ordinary', 'gateway creation', 'temporal floor'] as const;
  const pids2 = { gateway: gateway.pid, 'temporal floor': tfloor?.pid ?? 0, temporal: temporal.pid };
  let creation: Record<(typeof sides2)[number], Figures> | undefined;
  if (wants('creation')) {
    note(`2. creation: ${opts.n} per side`);
    creation = await measure(sides2, { n: opts.n, block: opts.block, concurrency: 1 }, pids2, (s, i) =>
      creationOp(s, i, 'measure'),
    );
  }

  const sides3 = ['gateway creation', 'temporal floor'] as const;
  let tput: Record<(typeof sides3)[number], Figures> | undefined;
  if (wants('throughput') && opts.burst > 0) {
    note(`3. throughput: ${opts.burst} creations per side, ${opts.clients} clients`);
    const burst = {
      n: opts.burst,
      block: Math.max(opts.clients * 4, Math.ceil(opts.burst / 2)),
      concurrency: opts.clients,
    };
    tput = await measure(sides3, burst, pids2, (s, i) => creationOp(s, i, 'burst'));
  }

  // Report
  const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL');
  const cpuCells = (f: Figures, names: string[]) => names.map((n) => f.cpu[n] ?? '');
  const out: string[] = [
    '',
    `bench:floor  gateway: serve all, default settings, token auth (${opts.users} users in turn); node ` +
      `${process.version}, ${os.cpus().length} cpus, load ${os.loadavg()[0]?.toFixed(1)}`,
  ];
  if (ordinary.length > 0) {
    out.push(
      '',
      table([
        [
          `1. ordinary tools/call work ${opts.ms} ms (ms)`,
          'in flight',
          'n',
          'p50',
          'p99',
          'req/s',
          'x direct p50',
          'x direct p99',
          'x bare req/s',
          ...Object.keys(pids1).map((n, i) => (i === 0 ? `CPU ms ${n}` : n)),
        ],
        ...ordinary.flatMap(({ concurrency, figures: o }) =>
          sides1.map((s) => [
            s,
            concurrency,
            o[s].count,
            o[s].p50,
            o[s].p99,
            o[s].perSecond,
            ratio(o[s].p50, o.direct.p50),
            ratio(o[s].p99, o.direct.p99),
            ratio(o[s].perSecond, o['bare proxy'].perSecond),
            ...cpuCells(o[s], Object.keys(pids1)),
          ]),
        ),
      ]),
    );
    for (const { concurrency, figures: o } of ordinary) {
      const over = round(o.gateway.p50 - o['bare proxy'].p50, 2);
      const rate = ratio(o.gateway.perSecond, o['bare proxy'].perSecond);
      const judged: string[] = [];
      if (concurrency === 1) {
        judged.push(
          `gateway p50 ${ratio(o.gateway.p50, o.direct.p50)}x direct (target <= ${TARGET.ordinaryP50}): ` +
            `${verdict(ratio(o.gateway.p50, o.direct.p50) <= TARGET.ordinaryP50)}`,
          `+${over} ms over the bare proxy's p50 (target <= +${TARGET.overBareP50Ms}): ` +
            `${verdict(over <= TARGET.overBareP50Ms)}`,
        );
      }
      if (concurrency === TARGET.rateAt) {
        judged.push(
          `req/s ${rate}x the bare proxy's (target >= ${TARGET.bareRate}): ${verdict(rate >= TARGET.bareRate)}`,
        );
      }
      const old = o['gateway before'];
      if (old) {
        judged.push(
          `gateway before: +${round(old.p50 - o['bare proxy'].p50, 2)} ms over the bare proxy's p50, ` +
            `${ratio(old.perSecond, o['bare proxy'].perSecond)}x its req/s`,
        );
      }
      judged.push(
        `floor (bare proxy) ${ratio(o['bare proxy'].p50, o.direct.p50)}x direct p50, ` +
          `${ratio(o['bare proxy'].perSecond, o.direct.perSecond)}x direct req/s`,
      );
      out.push(`   ${concurrency} in flight: ${judged.join('; ')}`);
    }
  }
  if (declaring) {
    const d = declaring;
    const base = d['without Tasks'];
    out.push(
      '',
      table([
        [
          `1b. declaring client, work ${opts.ms} ms (ms)`,
          'n',
          'p50',
          'p99',
          'x without Tasks p50',
          'x without Tasks p99',
          'CPU ms gateway',
          'worker-path gateway',
          'temporal',
        ],
        ...DECLARING_SIDES.map((s) => [
          s,
          d[s].count,
          d[s].p50,
          d[s].p99,
          ratio(d[s].p50, base.p50),
          ratio(d[s].p99, base.p99),
          ...cpuCells(d[s], ['gateway', 'worker-path gateway', 'temporal']),
        ]),
      ]),
      `   declaring (api path) p50 ${ratio(d['declaring, api path'].p50, base.p50)}x without Tasks (target <= ` +
        `${TARGET.declaringP50}): ${verdict(ratio(d['declaring, api path'].p50, base.p50) <= TARGET.declaringP50)}; ` +
        `worker path ${ratio(d['declaring, worker path'].p50, base.p50)}x`,
    );
  }
  if (creation) {
    const c = creation;
    out.push(
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
    );
  }
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
  const all = [
    ...ordinary.flatMap((o) => Object.values(o.figures)),
    ...Object.values(declaring ?? {}),
    ...Object.values(creation ?? {}),
    ...Object.values(tput ?? {}),
  ];
  const errors = all.flatMap((f) => f.errors);
  const log = gateway.log();
  out.push(
    '',
    `errors: ${errors.length}${errors.length > 0 ? ` (first: ${errors[0]})` : ''}; gateway log: ` +
      `${log.warnings} warnings, ${log.errors} errors${log.samples.length > 0 ? ` (${log.samples.join('; ')})` : ''}`,
  );
  process.stdout.write(`${out.join('\n')}\n`);
  const strip = (r: Record<string, Figures>) =>
    Object.fromEntries(Object.entries(r).map(([k, f]) => [k, { ...f, errors: f.errors.length }]));
  process.stdout.write(
    `${JSON.stringify({
      bench: 'floor',
      options: opts,
      load: os.loadavg(),
      ordinary: ordinary.map((o) => ({ concurrency: o.concurrency, ...strip(o.figures) })),
      declaring: declaring && strip(declaring),
      creation: creation && strip(creation),
      throughput: tput && strip(tput),
    })}\n`,
  );
}

runBench(main);
