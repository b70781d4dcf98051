/**
 * `npm run bench:neighbours [-- --seconds 10 --lanes 4 --only stalled-sse,drip --root ../before]`
 *
 * Noisy neighbours (issue 22): one tenant attacks a shared gateway while another tenant works, and the
 * victim's latency is measured before, during and after each attack, side by side in one run. The
 * gateway runs as users run it (`node dist/src/main/serve.js all`, default settings, a bootstrap file)
 * with two projects: `victim` on the example upstream, and `attacker` on a hostile upstream
 * (bench/hostile-process.ts, once plain and once advertising Tasks) and on the victim's own upstream
 * address (`shared`). The attacks are in bench/neighbour-attacks.ts, run by an attacker process of their
 * own (bench/neighbour-attacker.ts); it and the hostile upstreams run at `nice 19`, standing for machines
 * of their own: on this 2-core machine their CPU would otherwise be taken from the gateway under test.
 *
 * The victim makes ordinary calls (`example.work {ms: 2}` from a client without Tasks, unique arguments so
 * the result cache stays out of it) from `--lanes` clients; during the attacks on the task path it also creates tasks. Target: the
 * victim's p99 during an attack within 2x of its unloaded p99, no victim call failing, the gateway alive.
 * The gateway's RSS is sampled every 200 ms. `--root` runs another built checkout's gateway (its `dist/`) under
 * the same attacks: the "before" side of a change. Prints a table and one JSON line; the exit code is 0
 * whatever the verdicts (a dead gateway ends the run with 1).
 */
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { readFlags } from './options';
import { Agent } from 'undici';
import { note, runBench, startTemporal, tempDir } from './env';
import type { Attack } from './neighbour-attacks';
import { attacks } from './neighbour-attacks';
import { benchUsers, buildIfNeeded, forkReady, startGatewayProcess, startUpstreamProcess } from './processes';
import { McpHttpClient, percentile, ratio, round, sleep, table } from './support';

const TARGET_RATIO = 2;
/** `nice -n` of the processes that stand for other machines. */
const NICE = 19;

interface Sample {
  p50: number;
  p99: number;
  count: number;
  errors: number;
  firstError?: string;
}

interface Row {
  attack: string;
  op: 'call' | 'creation';
  unloaded: Sample;
  during: Sample;
  after: Sample;
  rssPeakMb: number;
  ratio: number;
  pass: boolean;
}

function options() {
  const flags = readFlags(process.argv.slice(2), {
    seconds: '10',
    lanes: '4',
    only: '',
    root: undefined,
  });
  const { values } = flags;
  return {
    seconds: Math.max(2, Number(values.seconds)),
    lanes: Math.max(1, Number(values.lanes)),
    only: new Set(values.only.split(',').filter(Boolean)),
    root: values.root,
  };
}

/** Runs `op` from `lanes` loops for `seconds`; latencies of the successes, and the failures counted. */
async function sample(lanes: number, seconds: number, op: (i: number) => Promise<string | undefined>) {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const until = performance.now() + seconds * 1000;
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (performance.now() < until) {
        const t0 = performance.now();
        let problem: string | undefined;
        try {
          problem = await op(next++);
        } catch (err) {
          problem = err instanceof Error ? err.message : String(err);
        }
        if (problem === undefined) latencies.push(performance.now() - t0);
        else {
          errors++;
          firstError ??= problem.slice(0, 160);
        }
      }
    }),
  );
  return {
    p50: round(percentile(latencies, 50), 1),
    p99: round(percentile(latencies, 99), 1),
    count: latencies.length,
    errors,
    ...(firstError !== undefined && { firstError }),
  } satisfies Sample;
}

async function main(): Promise<void> {
  const opts = options();
  buildIfNeeded();
  const dir = tempDir();
  const temporal = await startTemporal();
  const example = await startUpstreamProcess('example');
  // What stands for other machines (the hostile upstreams, the attacking clients) runs at a low CPU
  // priority, so the CPU it spends on this 2-core machine is not taken from the gateway under test.
  const hostile = await forkReady('hostile-process.ts', 'hostile', {}, { nice: NICE });
  const hostileTasks = await forkReady(
    'hostile-process.ts',
    'hostile-tasks',
    { tasks: true },
    { nice: NICE },
  );
  const attacker = await forkReady('neighbour-attacker.ts', 'attacker', {}, { nice: NICE });
  const [victimUser, attackerUser] = benchUsers(2, 'neighbour') as [
    ReturnType<typeof benchUsers>[0],
    ReturnType<typeof benchUsers>[0],
  ];
  const gateway = await startGatewayProcess({
    ...(opts.root !== undefined && { root: opts.root }),
    temporal,
    dir,
    users: [victimUser, attackerUser],
    projects: [
      { slug: 'victim', upstreams: [{ alias: 'example', url: example.url }] },
      {
        slug: 'attacker',
        upstreams: [
          { alias: 'hostile', url: hostile.url },
          { alias: 'tasks', url: hostileTasks.url },
          { alias: 'shared', url: example.url },
        ],
      },
    ],
  });
  const victimDispatcher = new Agent({ connections: 64 });
  // Ordinary calls come from a client without Tasks (one that declares it takes the task path for a
  // task-capable upstream, issue 23); creations from one that declares it.
  const victim = new McpHttpClient(`${gateway.url}/v1/mcp/victim`, victimDispatcher, {
    token: victimUser.token,
    tasks: false,
  });
  const victimTasks = new McpHttpClient(`${gateway.url}/v1/mcp/victim`, victimDispatcher, {
    token: victimUser.token,
  });
  const attackUrl = `${gateway.url}/v1/mcp/attacker`;
  const tell = (message: Record<string, unknown>, answer: string) =>
    new Promise<void>((resolve) => {
      const onMessage = (m: { type?: string }) => {
        if (m.type !== answer) return;
        attacker.child.off('message', onMessage);
        resolve();
      };
      attacker.child.on('message', onMessage);
      attacker.child.send(message);
    });

  let rssPeak = 0;
  let alive = true;
  const sampler = setInterval(() => {
    if (!existsSync(`/proc/${gateway.pid}`)) alive = false;
    else rssPeak = Math.max(rssPeak, safeRss(gateway.rssBytes));
  }, 200);

  const call = async (i: number) => {
    const reply = await victim.callTool('example.work', { ms: 2, nonce: `v-${Date.now()}-${i}` });
    return reply.result?.resultType === 'complete' ? undefined : describe(reply);
  };
  const create = async (i: number) => {
    const reply = await victimTasks.callTool('example.slow_compute', {
      seconds: 1,
      label: `v-${Date.now()}-${i}`,
    });
    return reply.result?.resultType === 'task' ? undefined : describe(reply);
  };

  note('warming up');
  await sample(opts.lanes, 3, call);
  const unloaded = {
    call: await sample(opts.lanes, opts.seconds, call),
    creation: await sample(2, opts.seconds, create),
  };
  note(`unloaded: call p50 ${unloaded.call.p50} / p99 ${unloaded.call.p99} ms`);
  const idleRssMb = round(safeRss(gateway.rssBytes) / 2 ** 20, 0);

  const rows: Row[] = [];
  for (const attack of attacks().filter((a) => opts.only.size === 0 || opts.only.has(a.name))) {
    if (!alive) break;
    note(`attack ${attack.name}: ${attack.what}`);
    rssPeak = 0;
    await tell({ type: 'start', name: attack.name, url: attackUrl, token: attackerUser.token }, 'started');
    const during = await measure(attack, opts, call, create);
    await tell({ type: 'stop' }, 'stopped');
    await sleep(2000);
    const after = await measure(attack, { ...opts, seconds: Math.max(2, opts.seconds / 2) }, call, create);
    for (const op of ['call', 'creation'] as const) {
      const d = during[op];
      const a = after[op];
      if (!d || !a) continue;
      const r = ratio(d.p99, unloaded[op].p99);
      rows.push({
        attack: attack.name,
        op,
        unloaded: unloaded[op],
        during: d,
        after: a,
        rssPeakMb: round(rssPeak / 2 ** 20, 0),
        ratio: r,
        pass: alive && d.errors === 0 && r <= TARGET_RATIO,
      });
    }
    note(`  gateway ${alive ? 'alive' : 'DEAD'}, RSS peak ${round(rssPeak / 2 ** 20, 0)} MB`);
  }
  clearInterval(sampler);

  process.stdout.write(
    `\nVictim latency (ms) before / during / after each attack; gateway idle RSS ${idleRssMb} MB\n` +
      table([
        [
          'attack',
          'victim op',
          'unloaded p50/p99',
          'during p50/p99',
          'after p50/p99',
          'p99 ×',
          'errors',
          'RSS peak MB',
          `≤ ${TARGET_RATIO}×`,
        ],
        ...rows.map((r) => [
          r.attack,
          r.op,
          `${r.unloaded.p50} / ${r.unloaded.p99}`,
          `${r.during.p50} / ${r.during.p99}`,
          `${r.after.p50} / ${r.after.p99}`,
          r.ratio,
          r.during.errors,
          r.rssPeakMb,
          r.pass ? 'PASS' : 'FAIL',
        ]),
      ]) +
      '\n',
  );
  for (const r of rows.filter((x) => x.during.firstError))
    process.stdout.write(`  ${r.attack} (${r.op}): first victim error: ${r.during.firstError}\n`);
  const log = gateway.log();
  process.stdout.write(`gateway log: ${log.warnings} warnings, ${log.errors} errors\n`);
  for (const s of log.samples) process.stdout.write(`  ${s}\n`);
  process.stdout.write(`${JSON.stringify({ bench: 'neighbours', alive, idleRssMb, rows })}\n`);
  await victimDispatcher.close();
  if (!alive) throw new Error('the gateway died during the attacks');
}

async function measure(
  attack: Attack,
  opts: { lanes: number; seconds: number },
  call: (i: number) => Promise<string | undefined>,
  create: (i: number) => Promise<string | undefined>,
): Promise<{ call: Sample; creation?: Sample }> {
  const [c, t] = await Promise.all([
    sample(opts.lanes, opts.seconds, call),
    attack.tasks ? sample(2, opts.seconds, create) : Promise.resolve(undefined),
  ]);
  return { call: c, ...(t && { creation: t }) };
}

function describe(reply: { status: number; error?: { code: number; message: string }; result?: unknown }) {
  return reply.error
    ? `HTTP ${reply.status} ${reply.error.code} ${reply.error.message}`
    : `HTTP ${reply.status} ${JSON.stringify(reply.result).slice(0, 120)}`;
}

function safeRss(read: () => number): number {
  try {
    return read();
  } catch {
    return 0;
  }
}

runBench(main);
