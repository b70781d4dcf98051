/**
 * `npm run bench:scale [-- --tasks 5000 --seconds 90 --poll 5000 --clients 32 --calls 200 --watch 100
 *   --short 60 --long 600 --rate 90 --root ../before]` (`--help` lists all)
 *
 * Many tasks in flight at once on the dev server, measured on what users run: an in-memory Temporal dev
 * server, example upstreams as processes of their own and the gateway (`node dist/src/main/serve.js
 * all`, default settings, token auth). In order:
 *
 * 1. an ordinary `tools/call` (`example.work {ms: 5}`, unique arguments: no cache hit) --calls times at
 *    concurrency 1, with nothing in flight: the unloaded p50;
 * 2. --tasks tasks of --seconds (plus a random part of a poll interval, so they do not all complete just
 *    before one of the gateway's polls) created by --clients clients on the `bulk` upstream, which
 *    suggests polling every --poll ms: creation throughput, creation latency, fair-share refusals (retried after their Retry-After, as a client should), errors; the number in
 *    flight over time (created and not yet due) and its peak; the gateway's and Temporal's RSS sampled
 *    every second;
 * 3. the same ordinary calls right after the last creation, with the tasks in flight: the loaded p50 and
 *    its ratio to the unloaded one; then 3 quiet seconds give the CPU the tasks in flight cost;
 * 4. completion visibility: --watch of the tasks, spread over the creation, followed on
 *    `subscriptions/listen` streams (taskIds, 25 per stream, opened as soon as their tasks exist); the lag
 *    is when the client read `notifications/tasks` saying `completed` minus the upstream's `lastUpdatedAt`;
 * 5. Temporal history per task: a --short s and a --long s task (each on its own upstream, polled every
 *    --poll ms as the bulk tasks are), started before 1; events over the whole continue-as-new chain.
 *    The bench waits for the long one, so a run lasts at least --long seconds.
 *
 * Targets (issue 16): gateway RSS <= 1 GiB (summed over the gateway's processes: `serve all` is one),
 * loaded p50 <= 1.5x unloaded, visibility p99 <= 1.2x the effective poll interval, history events of the
 * long task within +-50% of the short one's. PASS/FAIL printed, exit code 0 either way; one JSON line last.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { getFreePort } from '../src/tooling/processes';
import { taskKeyOf } from '../src/store/tasks/task-store';
import { taskWorkflowId } from '../src/workflows/messages';
import { note, runBench } from './env';
import {
  benchProject,
  benchUsers,
  callAndStreamAgents,
  gatewayTemporalClient,
  startBench,
  cpuMs,
  rssBytes,
  startGatewayProcess,
  startUpstreamProcess,
} from './processes';
import {
  finishReport,
  machine,
  McpHttpClient,
  percentile,
  ratio,
  replyProblem,
  round,
  sleep,
  summarize,
  table,
} from './support';
import { createTask, effectivePollMs, historyOf, many } from './task-support';
import { CompletionWatch, PER_STREAM, peakInFlight } from './scale-completions';
import { liveHeap, sampleRss, sampleWatchLag } from './scale-memory';
import { onOff, readFlags, wholeNumber } from './options';

const TARGET = { rssGiB: 1, loadedP50: 1.5, visibilityP99: 1.2, historyWithin: 0.5 };
const STREAMS_PER_CALLER = 16;
const GiB = 1024 ** 3;

interface Options {
  tasks: number;
  seconds: number;
  poll: number;
  clients: number;
  calls: number;
  watch: number;
  short: number;
  long: number;
  /** Another built checkout whose gateway runs instead of this one's (a before side). */
  root?: string;
  /** `tasks.watchBy` of the gateway: the watch hub (the default) or watch activities. */
  watchBy: 'activity' | 'hub';
  /** `temporal.maxCachedWorkflows` of the gateway; unset: its default (the SDK's, from the heap size). */
  cache?: number;
  wft?: number;
  /** Creations started per second at most (all clients together); unset: as fast as they go. */
  rate?: number;
  /** `tasks.hub.adoptApiEnlistment` of the gateway; unset: its default. */
  adopt?: boolean;
}

function parseOptions(argv: string[]): Options {
  const flags = readFlags(
    argv,
    {
      tasks: '5000',
      seconds: '90',
      poll: '5000',
      clients: '32',
      calls: '200',
      watch: '100',
      short: '60',
      long: '600',
      root: undefined,
      'watch-by': 'hub',
      cache: undefined,
      wft: undefined,
      rate: undefined,
      adopt: undefined,
    },
    'usage: npm run bench:scale -- [--tasks 5000] [--seconds 90] [--poll 5000] [--clients 32]\n' +
      '       [--calls 200] [--watch 100] [--short 60] [--long 600] [--watch-by activity|hub]\n' +
      '  --tasks    tasks created (all meant to be in flight at once)\n' +
      '  --seconds  how long each runs at the upstream (plus up to one poll interval)\n' +
      '  --poll     the poll interval the upstreams suggest, ms\n' +
      '  --clients  clients creating tasks at once\n' +
      '  --calls    ordinary calls timed unloaded and loaded\n' +
      '  --watch    tasks whose completion is followed on listen streams (at most 400)\n' +
      '  --short, --long  the two history tasks, s (the run lasts at least --long)\n' +
      "  --root     run another built checkout's gateway (its dist/; not built here)\n" +
      '  --watch-by activity|hub  what polls the tasks in flight (tasks.watchBy; default hub)\n' +
      '  --cache    temporal.maxCachedWorkflows of the gateway (default: its own default)\n' +
      '  --wft      temporal.maxConcurrentWorkflowTasks of the gateway (default: its own default)\n' +
      '  --rate     creations started per second at most, all clients together (default: as fast as\n' +
      '             they go); the tasks end at the rate they were created, so two builds compared with\n' +
      '             the same --rate absorb the same burst of ends\n' +
      '  --adopt on|off  tasks.hub.adoptApiEnlistment of the gateway (default: its own default)\n',
  );
  const { range: num, values } = flags;
  const watchBy = values['watch-by'];
  if (watchBy !== 'activity' && watchBy !== 'hub') throw new Error('--watch-by must be activity or hub');
  return {
    watchBy,
    tasks: Math.floor(num('tasks', 1)),
    seconds: num('seconds', 1),
    poll: Math.floor(num('poll', 1)),
    clients: Math.floor(num('clients', 1)),
    calls: Math.floor(num('calls', 1)),
    watch: Math.floor(num('watch', 0, PER_STREAM * STREAMS_PER_CALLER)),
    short: num('short', 1),
    long: num('long', 1),
    ...(values.root !== undefined && { root: values.root }),
    ...(values.cache !== undefined && { cache: wholeNumber(values.cache, '--cache') }),
    ...(values.wft !== undefined && { wft: wholeNumber(values.wft, '--wft') }),
    ...(values.rate !== undefined && { rate: Math.max(1, wholeNumber(values.rate, '--rate')) }),
    ...(values.adopt !== undefined && { adopt: onOff(values.adopt, '--adopt') }),
  };
}

/** `example.work {ms: 5}` with unique arguments, one at a time; latencies in ms. */
async function ordinaryCalls(client: McpHttpClient, count: number) {
  const run = randomUUID().slice(0, 8);
  const latencies: number[] = [];
  const errors: string[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    const reply = await client.callTool('example.work', { ms: 5, nonce: `${run}-${i}` });
    const problem = replyProblem(reply);
    if (problem === undefined) latencies.push(performance.now() - t0);
    else errors.push(problem);
  }
  return { latency: summarize(latencies), errors };
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const { t0, temporal, dir } = await startBench(opts);
  const [example, bulk, short, long] = await Promise.all([
    startUpstreamProcess('scale-upstream', {}),
    startUpstreamProcess('scale-upstream-bulk', { pollIntervalMs: opts.poll }),
    startUpstreamProcess('scale-upstream-short', { pollIntervalMs: opts.poll }),
    startUpstreamProcess('scale-upstream-long', { pollIntervalMs: opts.poll }),
  ]);
  // One user: listen streams follow only the caller's own tasks (16 streams per caller: --watch <= 400).
  const users = benchUsers(1);
  // The gateway's inspector, on loopback, for the live-heap readings (liveHeap).
  const inspectPort = await getFreePort();
  process.env['BENCH_GATEWAY_NODE_ARGS'] =
    `${process.env['BENCH_GATEWAY_NODE_ARGS'] ?? ''} --inspect=127.0.0.1:${inspectPort}`;
  // Its health port: the watch lag is sampled from /metrics through the run.
  const healthPort = await getFreePort();
  const gateway = await startGatewayProcess({
    ...(opts.root !== undefined && { root: opts.root }),
    temporal,
    dir,
    users,
    // Said even when it is the default: a --root checkout may have another default.
    sections: {
      health: { port: healthPort },
      tasks: {
        watchBy: opts.watchBy,
        ...(opts.adopt !== undefined && { hub: { adoptApiEnlistment: opts.adopt } }),
      },
      ...((opts.cache !== undefined || opts.wft !== undefined) && {
        temporal: {
          ...(opts.cache !== undefined && { maxCachedWorkflows: opts.cache }),
          ...(opts.wft !== undefined && { maxConcurrentWorkflowTasks: opts.wft }),
        },
      }),
    },
    projects: [benchProject({ example, bulk, short, long })],
  });
  const { agent, streamAgent } = callAndStreamAgents();
  const endpoint = `${gateway.url}/v1/mcp/bench`;
  const [main] = users;
  if (!main) throw new Error('no user');
  const tasksClient = new McpHttpClient(endpoint, agent, { token: main.token });
  const plain = new McpHttpClient(endpoint, agent, { tasks: false, token: main.token });
  const streamClient = new McpHttpClient(endpoint, streamAgent, { token: main.token });
  const temporalClient = await gatewayTemporalClient(temporal, gateway);
  const pollMs = effectivePollMs(opts.poll);

  note('warm-up');
  const warm = await many(10, 4, () => createTask(tasksClient, 'example.slow_compute', { seconds: 0 }));
  if (warm.errors.length > 0) throw new Error(`warm-up failed: ${warm.errors[0]}`);
  await ordinaryCalls(plain, 20);

  const history = await Promise.all(
    [
      { alias: 'short', seconds: opts.short, upstream: short },
      { alias: 'long', seconds: opts.long, upstream: long },
    ].map(async (h) => {
      const c = await createTask(tasksClient, `${h.alias}.slow_compute`, { seconds: h.seconds });
      return { ...h, workflowId: taskWorkflowId(taskKeyOf(c.taskId)) };
    }),
  );

  note(`1. ${opts.calls} ordinary calls, nothing in flight`);
  const unloaded = await ordinaryCalls(plain, opts.calls);

  note(
    `2. creating ${opts.tasks} tasks of ${opts.seconds} s with ${opts.clients} clients` +
      (opts.rate !== undefined ? `, at most ${opts.rate} a second` : ''),
  );
  const rss = sampleRss(gateway, temporal.pid);
  const watchLag = sampleWatchLag({ healthPort });
  const rssBefore = gateway.rssBytes();
  const heapBefore = await liveHeap(inspectPort);
  const watch = new CompletionWatch(streamClient);
  const watchEvery = opts.watch > 0 ? Math.max(1, Math.floor(opts.tasks / opts.watch)) : Infinity;
  let watched = 0;
  const durations: Array<{ createdAtMs: number; seconds: number }> = [];
  // The clients behave as clients should under back-pressure: a fair-share refusal is retried after its
  // Retry-After (counted as "refused early"); any other failure is an error.
  const refusedEarly = { count: 0 };
  const creationStart = performance.now();
  const creation = await many(opts.tasks, opts.clients, async (i) => {
    if (opts.rate !== undefined) {
      const wait = creationStart + (i * 1000) / opts.rate - performance.now();
      if (wait > 0) await sleep(wait);
    }
    const seconds = round(opts.seconds + (Math.random() * pollMs) / 1000, 3);
    const c = await createTask(
      tasksClient,
      'bulk.slow_compute',
      { seconds, label: `scale-${i}` },
      refusedEarly,
    );
    durations.push({ createdAtMs: c.createdAtMs, seconds });
    if (i % watchEvery === 0 && watched < opts.watch) {
      watched++;
      watch.add(c, c.createdAtMs + seconds * 1000);
    }
    if ((i + 1) % 500 === 0) note(`   ${i + 1} created, ${Math.round(performance.now() - t0) / 1000} s`);
    return c;
  });
  watch.flush();
  const createdEnd = Date.now();
  const inFlightAtEnd = durations.filter((d) => d.createdAtMs + d.seconds * 1000 > createdEnd).length;
  const peak = peakInFlight(durations);
  const rssAtEnd = gateway.rssBytes();
  const temporalRssAtEnd = rssBytes(temporal.pid);
  const tasksPerSecond = creation.ok.length / (creation.wallMs / 1000);
  note(
    `   ${creation.ok.length} created in ${round(creation.wallMs / 1000, 1)} s; ${inFlightAtEnd} in flight`,
  );

  watchLag.enter('running');
  note(`3. ${opts.calls} ordinary calls with ${inFlightAtEnd} tasks in flight`);
  const loaded = await ordinaryCalls(plain, opts.calls);
  const inFlightAfterCalls = durations.filter((d) => d.createdAtMs + d.seconds * 1000 > Date.now()).length;
  const cpu0 = { gateway: cpuMs(gateway.pid), temporal: cpuMs(temporal.pid) };
  const quietStart = performance.now();
  await sleep(3000);
  const quietMs = performance.now() - quietStart;
  const quietCpu = {
    gateway: round((100 * (cpuMs(gateway.pid) - cpu0.gateway)) / quietMs, 0),
    temporal: round((100 * (cpuMs(temporal.pid) - cpu0.temporal)) / quietMs, 0),
  };

  // The heap's growth while the tasks only wait: what each task in flight accrues with its age.
  const heapEarly = { at: Date.now(), bytes: await liveHeap(inspectPort) };
  const firstDue = Math.min(...durations.map((d) => d.createdAtMs + d.seconds * 1000));
  await sleep(Math.max(0, firstDue - 8000 - Date.now()));
  const heapLate = { at: Date.now(), bytes: await liveHeap(inspectPort) };
  const heapGrowth = {
    beforeMB: round(heapBefore / 1024 ** 2, 0),
    earlyMB: round(heapEarly.bytes / 1024 ** 2, 0),
    lateMB: round(heapLate.bytes / 1024 ** 2, 0),
    kbPerTaskEarly: round((heapEarly.bytes - heapBefore) / 1024 / inFlightAtEnd, 1),
    kbPerTaskLate: round((heapLate.bytes - heapBefore) / 1024 / inFlightAtEnd, 1),
    seconds: round((heapLate.at - heapEarly.at) / 1000, 0),
    kbPerTaskPerMinute: round(
      (heapLate.bytes - heapEarly.bytes) / 1024 / inFlightAtEnd / ((heapLate.at - heapEarly.at) / 60_000),
      1,
    ),
  };
  note(
    `   live heap ${heapGrowth.beforeMB} MB before creating, ${heapGrowth.earlyMB} MB after, ` +
      `${heapGrowth.lateMB} MB ${heapGrowth.seconds} s later: ${heapGrowth.kbPerTaskEarly} -> ` +
      `${heapGrowth.kbPerTaskLate} KB per task in flight, ${heapGrowth.kbPerTaskPerMinute} KB per task per minute`,
  );

  note(`4. waiting for the ${watched} followed tasks to complete`);
  await sleep(Math.max(0, firstDue - Date.now()));
  watchLag.enter('ending');
  await watch.finish(2 * pollMs + 60_000);
  rss.stop();
  await watchLag.stop();
  const lagSeconds = Object.fromEntries([...watchLag.maxByPhase].map(([k, v]) => [k, round(v, 1)]));
  const pollsByPhase = watchLag.pollsByPhase();
  const lag = summarize([...watch.lags.values()]);

  note(`5. history: waiting for the ${opts.long} s task`);
  const counts = [];
  for (const h of history) {
    await temporalClient.withDeadline(Date.now() + h.seconds * 1000 + 180_000, () =>
      temporalClient.workflow.getHandle(h.workflowId).result(),
    );
    counts.push({
      seconds: h.seconds,
      ...(await historyOf(temporalClient, h.workflowId)),
      polls: (await h.upstream.stats()).tasksGet,
    });
  }
  const [shortH, longH] = counts;
  if (!shortH || !longH) throw new Error('history tasks missing');
  const log = gateway.log();

  const mb = (b: number) => round(b / 1024 ** 2, 0);
  const verdict = {
    rss: rss.peak.gateway <= TARGET.rssGiB * GiB,
    loadedP50: ratio(loaded.latency.p50, unloaded.latency.p50) <= TARGET.loadedP50,
    visibility: lag.count > 0 && lag.p99 / pollMs <= TARGET.visibilityP99,
    history: Math.abs(longH.events / shortH.events - 1) <= TARGET.historyWithin,
  };
  const pf = (b: boolean) => (b ? 'PASS' : 'FAIL');
  const out: string[] = [''];
  out.push(
    `bench:scale  ${opts.tasks} tasks of ${opts.seconds} s on the dev server; upstreams suggest polling every ` +
      `${opts.poll} ms (effective ${pollMs}); gateway: serve all, default settings, tasks.watchBy ${opts.watchBy}; node ${process.version}, ` +
      `${os.cpus().length} cpus, load ${os.loadavg()[0]?.toFixed(1)}`,
    '',
    table([
      [
        'creation',
        'created',
        'refused early, retried',
        'errors',
        'wall s',
        'tasks/s',
        'p50 ms',
        'p99 ms',
        'peak in flight',
        'in flight at end',
      ],
      [
        `${opts.clients} clients`,
        creation.ok.length,
        refusedEarly.count,
        creation.errors.length,
        round(creation.wallMs / 1000, 1),
        round(tasksPerSecond, 1),
        round(
          percentile(
            creation.ok.map((c) => c.latencyMs),
            50,
          ),
          0,
        ),
        round(
          percentile(
            creation.ok.map((c) => c.latencyMs),
            99,
          ),
          0,
        ),
        peak,
        inFlightAtEnd,
      ],
    ]),
    '',
    table([
      ['memory', 'gateway RSS MB', 'Temporal RSS MB'],
      ['before creating', mb(rssBefore), '-'],
      [`after creating (${inFlightAtEnd} in flight)`, mb(rssAtEnd), mb(temporalRssAtEnd)],
      ['peak (sampled every second)', mb(rss.peak.gateway), mb(rss.peak.temporal)],
    ]),
    `   gateway RSS peak ${round(rss.peak.gateway / GiB, 2)} GiB (target <= ${TARGET.rssGiB}): ${pf(verdict.rss)}; ` +
      `idle CPU with ${inFlightAfterCalls} in flight: gateway ${quietCpu.gateway}%, Temporal ${quietCpu.temporal}% of a core`,
    '',
    table([
      ['ordinary tools/call, ms', 'n', 'p50', 'p99', 'errors'],
      [
        'nothing in flight',
        unloaded.latency.count,
        unloaded.latency.p50,
        unloaded.latency.p99,
        unloaded.errors.length,
      ],
      [
        `${inFlightAtEnd} in flight`,
        loaded.latency.count,
        loaded.latency.p50,
        loaded.latency.p99,
        loaded.errors.length,
      ],
    ]),
    `   loaded / unloaded p50 ${ratio(loaded.latency.p50, unloaded.latency.p50)} (target <= ${TARGET.loadedP50}): ${pf(verdict.loadedP50)}`,
    '',
    table([
      ['completion pushed, ms after the upstream', 'n', 'p50', 'p99', 'max', 'p99 / interval'],
      ['notifications/tasks', lag.count, lag.p50, lag.p99, lag.max, ratio(lag.p99, pollMs)],
    ]),
    `   p99 ${ratio(lag.p99, pollMs)}x the ${pollMs} ms poll interval (target <= ${TARGET.visibilityP99}): ` +
      `${pf(verdict.visibility)}; ${watch.failures.length} failures`,
    `   watch lag (/metrics, most overdue upstream, every 2 s), max s: ${Object.entries(lagSeconds)
      .map(([phase, s]) => `${phase} ${s}`)
      .join(', ')}`,
    `   upstream polls a second (gateway CPU ms per poll, all its work counted): ${Object.entries(
      pollsByPhase,
    )
      .map(([phase, p]) => `${phase} ${p.pollsPerSecond} (${p.cpuMsPerPoll ?? '-'})`)
      .join(', ')}`,
    '',
    table([
      ['history per task', 'events', 'runs', 'activities', 'LA markers', 'upstream polls'],
      ...counts.map((c) => [
        `${c.seconds} s task`,
        c.events,
        c.runs,
        c.activitiesScheduled,
        c.localActivityMarkers,
        c.polls,
      ]),
    ]),
    `   long / short events ${ratio(longH.events, shortH.events)} (target within +-${TARGET.historyWithin * 100}%): ${pf(verdict.history)}`,
    '',
  );
  const totalSeconds = finishReport(
    out,
    {
      count: creation.errors.length + unloaded.errors.length + loaded.errors.length + watch.failures.length,
      examples: [...creation.errors, ...loaded.errors, ...watch.failures],
    },
    log,
    t0,
  );
  process.stdout.write(
    `${JSON.stringify({
      bench: 'scale',
      options: opts,
      machine: machine(),
      effectivePollMs: pollMs,
      creation: {
        created: creation.ok.length,
        refusedEarly: refusedEarly.count,
        errors: creation.errors.length,
        wallSeconds: round(creation.wallMs / 1000, 1),
        tasksPerSecond: round(tasksPerSecond, 1),
        latencyMs: summarize(creation.ok.map((c) => c.latencyMs)),
        peakInFlight: peak,
        inFlightAtEnd,
      },
      heapGrowth,
      rssMB: {
        before: mb(rssBefore),
        atEnd: mb(rssAtEnd),
        peak: mb(rss.peak.gateway),
        temporalPeak: mb(rss.peak.temporal),
      },
      quietCpuPercent: { ...quietCpu, inFlight: inFlightAfterCalls },
      ordinary: {
        unloaded: unloaded.latency,
        loaded: loaded.latency,
        ratioP50: ratio(loaded.latency.p50, unloaded.latency.p50),
      },
      visibility: { lag, watched, failures: watch.failures, watchLagSeconds: lagSeconds, pollsByPhase },
      history: counts,
      target: TARGET,
      verdict,
      gatewayLog: { warnings: log.warnings, errors: log.errors },
      totalSeconds,
    })}\n`,
  );
}

runBench(main);
