/**
 * `npm run bench:hosted [-- --n 200 --window 500 --inflight 1000 --seconds 60 ...]` (`--help` lists all)
 *
 * Hosted tasks (issue 24, docs/hosted-tasks.md): ordinary tools of an upstream that runs no tasks itself,
 * run by the gateway as its own durable tasks. Measured on what users run: an in-memory Temporal dev
 * server, the example upstream with tasks off (`advertiseTasks: false`, so `slow_compute {seconds}` is an
 * ordinary tool answering after `seconds`) as a process of its own, and the gateway as its own process
 * through the production entry point (`node dist/src/main/serve.js all`, built first when stale) with
 * default settings (token auth, namespacing on, log at info). One project `bench` reaches that upstream
 * under several aliases that differ only in their hosting policy (bootstrap file):
 *
 * | alias         | hosting                                                          |
 * | ------------- | ---------------------------------------------------------------- |
 * | `direct`      | none: ordinary calls                                             |
 * | `hosted`      | `{ tools: ['slow_compute'] }` (the default window, 2,000 ms)     |
 * | `promoted<w>` | `{ tools: ['slow_compute'], promoteAfterMs: w }`, w in --windows  |
 * | `fleet0`, ... | `{ tools: ['slow_compute'], promoteAfterMs: 0 }`, one per --per-upstream calls of 3 |
 *
 * The client is a 2026-07-28 client declaring Tasks (bench/support.ts). In order (bench/hosted-runs.ts):
 *
 * 1. A quick hosted tool answered synchronously: `hosted.slow_compute {seconds: 0}` against
 *    `direct.slow_compute {seconds: 0}`, --n per side in ABBA blocks of --block: p50/p99, the ratio and
 *    the difference, with the CPU the gateway and Temporal used per call.
 * 2. Creation of a promoted task: `promoted<w>.slow_compute {seconds: --promote-seconds}` answered with
 *    a CreateTaskResult after the window w, for each window of --windows (500 ms, and the default 2,000);
 *    the time from the call to it minus the window, p50/p99, against the same for an ordinary call that
 *    lasts the first window (`direct.slow_compute {seconds: w}`), ABBA; and where the time goes (the
 *    median time from the call to each event of the task's workflow history).
 * 3. Hosted calls in flight vs gateway RSS: --inflight calls of --seconds, created by --clients clients
 *    (a `-31013` fair-share refusal is retried after its delay, as a client should), spread over the fleet
 *    aliases so that no project upstream holds more than --per-upstream (its connection pool has 128,
 *    `upstreams.poolConnections`: past it, calls wait for a connection). RSS before, with all in flight,
 *    peak and after, and the live heap before and with all in flight (the gateway runs with `--inspect`
 *    on loopback, as in bench:scale: both readings follow a forced full collection), so KB per call in
 *    flight of each; idle CPU with them in flight; then each task is read with `tasks/get` once due (again
 *    every 2 s for --wait s): whether all complete. (60 s is the figure; a call that long races
 *    the upstream client's 60 s bound on an answer's headers, docs/performance.md "Hosted tasks".)
 *
 * No targets are stated for these (issue 24 asks for the figures): no PASS/FAIL. Prints tables and, last,
 * one JSON line with every figure. Leaves no processes behind.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { getFreePort } from '../src/tooling/processes';
import { note, runBench } from './env';
import type { Figures } from './measure';
import type { GatewayProject } from './processes';
import {
  benchClient,
  benchUsers,
  gatewayTemporalClient,
  startBench,
  startGatewayProcess,
  startUpstreamProcess,
} from './processes';
import type { HostedOptions } from './hosted-runs';
import { inFlight, promotedOutcomes, promotion, quickSync } from './hosted-runs';
import { ratio, replyProblem, round, table } from './support';
import { many } from './task-support';
import { creationTimeline } from './tasks-latency';
import { hostedCallTimeline } from './hosted-timeline';
import { readFlags } from './options';

function parseOptions(argv: string[]): HostedOptions {
  const flags = readFlags(
    argv,
    {
      n: '200',
      block: '20',
      concurrency: '1',
      promotions: '40',
      windows: '500,2000',
      'promote-seconds': '3',
      inflight: '1000',
      seconds: '60',
      'per-upstream': '100',
      clients: '32',
      wait: '60',
      warmup: '10',
    },
    'usage: npm run bench:hosted -- [options]\n' +
      '  --n 200               1: quick calls per side (hosted, direct); --block 20 per ABBA block\n' +
      '  --concurrency 1       1: calls in flight\n' +
      '  --promotions 40       2: promoted tasks per window (and ordinary calls of the first) per side\n' +
      '  --windows 500,2000    2: promoteAfterMs of each `promoted<ms>` alias\n' +
      '  --promote-seconds 3   2: how long the promoted calls run (longer than every window)\n' +
      '  --inflight 1000       3: hosted calls held in flight at once (0: skip 3)\n' +
      '  --seconds 60          3: how long each runs\n' +
      '  --per-upstream 100    3: most calls per project upstream alias (its pool has 128 connections)\n' +
      '  --clients 32          3: clients creating them at once\n' +
      '  --wait 60             3: how long past their due time to wait for all to finish, s\n' +
      '  --warmup 10           unmeasured calls per alias first\n',
  );
  const { int, num } = flags;
  const opts: HostedOptions = {
    n: int('n', 1),
    block: int('block', 1),
    concurrency: int('concurrency', 1),
    promotions: int('promotions', 0),
    windows: flags.ints('windows', 1),
    promoteSeconds: num('promote-seconds', 0),
    inflight: int('inflight', 0),
    seconds: num('seconds', 1),
    perUpstream: int('per-upstream', 1),
    clients: int('clients', 1),
    wait: num('wait', 0),
    warmup: int('warmup', 0),
  };
  if (opts.windows.length === 0) throw new Error('--windows names at least one window');
  if (opts.windows.some((w) => opts.promoteSeconds * 1000 <= w)) {
    throw new Error('--promote-seconds must be longer than every window: the calls must outlast them');
  }
  return opts;
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const { t0, temporal, dir } = await startBench(opts);
  const upstream = await startUpstreamProcess('bench-upstream-hosted', { advertiseTasks: false });
  const tools = ['slow_compute'];
  const fleet = Array.from({ length: Math.ceil(opts.inflight / opts.perUpstream) }, (_, k) => ({
    alias: `fleet${k}`,
    url: upstream.url,
    hosting: { tools, promoteAfterMs: 0 },
  }));
  const project: GatewayProject = {
    slug: 'bench',
    upstreams: [
      { alias: 'direct', url: upstream.url },
      { alias: 'hosted', url: upstream.url, hosting: { tools } },
      ...opts.windows.map((w) => ({
        alias: `promoted${w}`,
        url: upstream.url,
        hosting: { tools, promoteAfterMs: w },
      })),
      ...fleet,
    ],
  };
  const users = benchUsers(1);
  // The gateway's inspector, on loopback, for its live heap after a full collection (as bench:scale).
  const inspectPort = await getFreePort();
  process.env['BENCH_GATEWAY_NODE_ARGS'] =
    `${process.env['BENCH_GATEWAY_NODE_ARGS'] ?? ''} --inspect=127.0.0.1:${inspectPort}`;
  const gateway = await startGatewayProcess({ temporal, dir, users, projects: [project] });
  note(`gateway up after ${Math.round(performance.now() - t0)} ms`);

  const { client } = benchClient(gateway, users);
  const pids = { gateway: gateway.pid, temporal: temporal.pid };

  // Warm-up: discovery of every alias, HTTP connections, workflow isolate, JIT. Not measured.
  if (opts.warmup > 0) {
    note(`warm-up: ${opts.warmup} calls per alias`);
    const promoted = opts.windows.map((w) => `promoted${w}`);
    for (const alias of ['direct', 'hosted', ...promoted, ...fleet.map((f) => f.alias).slice(0, 1)]) {
      const warm = await many(opts.warmup, 4, async () => {
        const problem = replyProblem(await client.callTool(`${alias}.slow_compute`, { seconds: 0 }));
        if (problem) throw new Error(problem);
      });
      if (warm.errors.length > 0) throw new Error(`warm-up of ${alias} failed: ${warm.errors[0]}`);
    }
  }

  const quickSince = new Date();
  const quick = await quickSync(client, opts, pids);
  const quickUntil = new Date();
  const promote = opts.promotions > 0 ? await promotion(client, opts, pids) : undefined;
  const held =
    opts.inflight > 0
      ? await inFlight(client, opts, gateway, temporal.pid, upstream, inspectPort)
      : undefined;
  const promotedDone = promote
    ? await promotedOutcomes(
        client,
        promote.flatMap((p) => p.timed.map((t) => t.taskId)),
      )
    : undefined;
  // Where a promoted creation's time goes: the median time from the call to each event of its workflow.
  const temporalClient = await gatewayTemporalClient(temporal, gateway);
  const quickTimeline = await hostedCallTimeline(temporalClient, quickSince, quickUntil, 20);
  const timelines: Array<{ side: string; events: Array<{ event: string; ms: number }> }> = [];
  for (const p of promote ?? []) {
    if (p.timed.length > 0)
      timelines.push({ side: p.side, events: await creationTimeline(temporalClient, p.timed, 20) });
  }
  const log = gateway.log();

  const side = (name: string, f: Figures) => [
    name,
    f.count,
    f.p50,
    f.p99,
    f.perSecond,
    f.cpu['gateway'] ?? Number.NaN,
    f.cpu['temporal'] ?? Number.NaN,
    f.errors.length,
  ];
  const header = ['', 'calls', 'p50 ms', 'p99 ms', 'calls/s', 'CPU ms/call gateway', 'Temporal', 'errors'];
  const out: string[] = [];
  out.push(
    `\nhosted tasks, ${os.cpus().length} cores, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}, ${round((performance.now() - t0) / 1000, 0)} s\n`,
  );
  out.push('1. quick tool answered synchronously (hosted, default window) vs the same call unhosted');
  out.push(table([header, side('hosted', quick.hosted), side('direct', quick.direct)]));
  out.push(
    `   hosted / direct: p50 ${ratio(quick.hosted.p50, quick.direct.p50)}x (+${round(
      quick.hosted.p50 - quick.direct.p50,
      2,
    )} ms), p99 ${ratio(quick.hosted.p99, quick.direct.p99)}x (+${round(quick.hosted.p99 - quick.direct.p99, 2)} ms)`,
  );
  out.push(
    `   median ms from the workflow's start to each event of a quick hosted call's workflow (20 of 1; the client's p50 is ${quick.hosted.p50} ms):`,
  );
  out.push(table(quickTimeline.map((e) => [`     ${e.event}`, e.ms])));
  out.push('');
  if (promote) {
    out.push(
      '2. promoted task: time from the call to its CreateTaskResult minus the window, ' +
        `vs an ordinary call lasting the first window (${opts.windows[0]} ms), minus it`,
    );
    out.push(
      table([
        ['', 'calls', 'p50 ms after', 'p99 ms after', 'calls/s', 'CPU ms/call gateway', 'Temporal', 'errors'],
        ...promote.map((p) =>
          side(p.side === 'ordinary' ? 'ordinary call' : `promoted, window ${p.window} ms`, p.after),
        ),
      ]),
    );
    out.push(
      `   promoted tasks read at the end: ${JSON.stringify(promotedDone)} (of ${promote.reduce((n, p) => n + p.timed.length, 0)})`,
    );
    out.push(
      `   median ms from the call to each event of a promoted task's workflow (last 20 of each window):`,
    );
    const events = [...new Set(timelines.flatMap((t) => t.events.map((e) => e.event)))];
    out.push(
      table([
        ['     event', ...timelines.map((t) => t.side)],
        ...events.map((e) => [
          `     ${e}`,
          ...timelines.map((t) => t.events.find((x) => x.event === e)?.ms ?? Number.NaN),
        ]),
      ]),
    );
    out.push('');
  }
  if (held) {
    out.push(`3. ${held.requested} hosted calls of ${opts.seconds} s in flight (${opts.clients} clients)`);
    out.push(
      table([
        ['', 'value'],
        ['created', held.created],
        ['refused early (-31013, retried)', held.refused],
        ['creation errors', held.errors.length],
        ['ramp s', held.rampSeconds],
        ['created/s', held.createdPerSecond],
        ['creation p50 / p99 ms', `${held.creationP50} / ${held.creationP99}`],
        ['calls at the upstream after the ramp', held.upstreamReceived],
        ['peak in flight (from createdAt)', held.peakInFlight],
        ['in flight when memory was read', held.inFlightAtReading],
        ['gateway RSS before MB', held.rssMB.before],
        ['gateway RSS all in flight MB', held.rssMB.inFlight],
        ['gateway RSS peak MB', held.rssMB.peak],
        ['gateway RSS after MB', held.rssMB.after],
        ['KB of RSS per call in flight', held.kbPerCall],
        ['live heap before / all in flight MB', `${held.heapMB.before} / ${held.heapMB.inFlight}`],
        ['KB of live heap per call in flight', held.heapKbPerCall],
        [
          'Temporal RSS before / in flight / peak MB',
          `${held.temporalRssMB.before} / ${held.temporalRssMB.inFlight} / ${held.temporalRssMB.peak}`,
        ],
        ['idle CPU in flight % gateway / Temporal', `${held.idleCpu.gateway} / ${held.idleCpu.temporal}`],
        ['outcomes', JSON.stringify(held.outcomes)],
        ['all completed', held.outcomes['completed'] === held.requested ? 'yes' : 'no'],
        ['wall s (first creation to last seen done)', held.wallSeconds],
      ]),
    );
    for (const f of [...new Set([...held.errors, ...held.failures])].slice(0, 5)) out.push(`   ${f}`);
    out.push('');
  }
  out.push(`gateway log: ${log.warnings} warnings, ${log.errors} errors`);
  for (const s of log.samples) out.push(`   ${s}`);
  process.stdout.write(`${out.join('\n')}\n`);
  process.stdout.write(
    `${JSON.stringify({ opts, quick, promote: promote?.map((p) => ({ ...p, timed: undefined })), promotedDone, timelines, quickTimeline, held, log })}\n`,
  );
}

runBench(main);
