/**
 * `npm run bench:tasks [-- --n 200 --seconds 1 --poll 500 --long 60 --rounds 3]`
 *
 * Self-contained benchmark of the durable task path. Starts its own in-memory Temporal dev server, three
 * example upstreams and the gateway (API + worker roles, temp SQLite store, random key), then measures:
 *
 * 1. Task creation latency: rounds of N concurrent task-aware `tools/call slow_compute` made directly to
 *    the upstream, then the same N through the gateway (update-with-start + first upstream call), so
 *    the ratio gateway/direct is measured side by side under the same conditions.
 * 2. Completion visibility lag: each gateway task is polled with `tasks/get` (every --poll-every ms,
 *    at most --poll-concurrency polls in flight) from the earliest moment it can be done; the lag is the
 *    first response showing `completed` minus the upstream's own completion time (`lastUpdatedAt`,
 *    relayed by the gateway). The lower bound uses the previous poll that still showed it unfinished.
 * 3. Temporal history per task: one 5 s and one --long s task, each on its own upstream (so its upstream
 *    poll count is exact), run concurrently with 1 and 2; events are summed over every run of the chain.
 *
 * Prints a table and, last, one JSON line with every figure. Leaves no processes behind.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { Client } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import type { ExampleUpstream } from '../examples/upstream/server';
import { taskKeyOf } from '../src/store/task-store';
import { taskWorkflowId } from '../src/workflows/messages';
import { note, runBench, startEnv } from './env';
import type { McpHttpClient, RpcReply, Summary } from './support';
import { mapLimit, ratio, round, Semaphore, sleep, summarize, table } from './support';

interface Options {
  n: number;
  seconds: number;
  poll: number;
  long: number;
  short: number;
  rounds: number;
  pollEvery: number;
  pollConcurrency: number;
  warmup: number;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      n: { type: 'string', default: '200' },
      seconds: { type: 'string', default: '1' },
      poll: { type: 'string', default: '500' },
      long: { type: 'string', default: '60' },
      short: { type: 'string', default: '5' },
      rounds: { type: 'string', default: '3' },
      'poll-every': { type: 'string', default: '50' },
      'poll-concurrency': { type: 'string', default: '8' },
      warmup: { type: 'string', default: '10' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(
      'usage: npm run bench:tasks -- [--n 200] [--seconds 1] [--poll 500] [--long 60] [--short 5]\n' +
        '       [--rounds 3] [--poll-every 50] [--poll-concurrency 8] [--warmup 10]\n',
    );
    process.exit(0);
  }
  const num = (name: string, raw: string, min: number): number => {
    const v = Number(raw);
    if (!Number.isFinite(v) || v < min) throw new Error(`--${name} must be a number >= ${min} (got ${raw})`);
    return v;
  };
  return {
    n: Math.floor(num('n', values.n, 1)),
    seconds: num('seconds', values.seconds, 0),
    poll: Math.floor(num('poll', values.poll, 1)),
    long: num('long', values.long, 0),
    short: num('short', values.short, 0),
    rounds: Math.floor(num('rounds', values.rounds, 1)),
    pollEvery: num('poll-every', values['poll-every'], 1),
    pollConcurrency: Math.floor(num('poll-concurrency', values['poll-concurrency'], 1)),
    warmup: Math.floor(num('warmup', values.warmup, 0)),
  };
}

// ---------------------------------------------------------------------------------------------------
// 1. Creation

interface Created {
  taskId: string;
  createdAtMs: number;
  latencyMs: number;
}

interface BatchOutcome {
  created: Created[];
  latencies: number[];
  wallMs: number;
  errors: string[];
}

/** N concurrent calls; `onCreated` runs as soon as each task exists (not after the whole batch). */
async function createBatch(
  client: McpHttpClient,
  n: number,
  args: Record<string, unknown>,
  onCreated?: (c: Created) => void,
): Promise<BatchOutcome> {
  const errors: string[] = [];
  const started = performance.now();
  const outcomes = await Promise.all(
    Array.from({ length: n }, async (): Promise<Created | undefined> => {
      const t0 = performance.now();
      let reply: RpcReply;
      try {
        reply = await client.callTool('slow_compute', args);
      } catch (err) {
        errors.push(`transport: ${err instanceof Error ? err.message : String(err)}`);
        return undefined;
      }
      const latencyMs = performance.now() - t0;
      const r = reply.result;
      if (r?.resultType !== 'task' || typeof r.taskId !== 'string' || typeof r.createdAt !== 'string') {
        errors.push(`HTTP ${reply.status}: ${JSON.stringify(reply.error ?? r).slice(0, 200)}`);
        return undefined;
      }
      const created = { taskId: r.taskId, createdAtMs: Date.parse(r.createdAt), latencyMs };
      onCreated?.(created);
      return created;
    }),
  );
  const created = outcomes.filter((o): o is Created => o !== undefined);
  return {
    created,
    latencies: created.map((c) => c.latencyMs),
    wallMs: performance.now() - started,
    errors,
  };
}

// ---------------------------------------------------------------------------------------------------
// 2. Completion visibility

interface Visibility {
  lagMs: number;
  /** Lag if completion became visible right after the previous poll (which still saw it working) was sent. */
  lagLowerMs: number;
  polls: number;
  /** Round trip of every tasks/get of this task, ms. */
  getMs: number[];
}

type WatchOutcome = { ok: true; v: Visibility } | { ok: false; reason: string };

async function watchUntilCompleted(
  client: McpHttpClient,
  sem: Semaphore,
  task: Created,
  opts: Options,
): Promise<WatchOutcome> {
  // Neither the upstream (created after the gateway's createdAt) nor the gateway can show it done earlier.
  const earliest = task.createdAtMs + opts.seconds * 1000;
  const deadline = earliest + 120_000;
  await sleep(earliest - Date.now());
  let prevSentAt: number | undefined;
  const getMs: number[] = [];
  let polls = 0;
  let errors = 0;
  for (;;) {
    const release = await sem.acquire();
    const sentAt = Date.now();
    let reply: RpcReply | undefined;
    try {
      reply = await client.getTask(task.taskId);
    } catch {
      reply = undefined;
    } finally {
      release();
    }
    const at = Date.now();
    polls++;
    getMs.push(at - sentAt);
    const r = reply?.result;
    if (!r) {
      if (++errors >= 5) return { ok: false, reason: `tasks/get failed: ${JSON.stringify(reply?.error)}` };
    } else if (r.status === 'completed') {
      const upstreamDone = Date.parse(String(r.lastUpdatedAt));
      if (!Number.isFinite(upstreamDone)) return { ok: false, reason: 'completed without lastUpdatedAt' };
      // The previous poll saw it working at some instant after it was sent; this one saw it done before `at`.
      const lower = Math.max(prevSentAt ?? upstreamDone, upstreamDone);
      return { ok: true, v: { lagMs: at - upstreamDone, lagLowerMs: lower - upstreamDone, polls, getMs } };
    } else if (r.status !== 'working') {
      return {
        ok: false,
        reason: `ended ${String(r.status)}: ${JSON.stringify(r.error ?? r.statusMessage)}`,
      };
    } else {
      prevSentAt = sentAt;
    }
    if (at > deadline) return { ok: false, reason: `still ${String(r?.status)} 120 s after it was due` };
    await sleep(sentAt + opts.pollEvery - Date.now());
  }
}

/** Waits for every task's workflow to close; returns the ids of those that did not complete cleanly. */
async function awaitWorkflows(client: Client, taskIds: readonly string[], timeoutMs: number) {
  const failures: string[] = [];
  await mapLimit(taskIds, 64, async (taskId) => {
    const handle = client.workflow.getHandle(taskWorkflowId(taskKeyOf(taskId)));
    try {
      await client.withDeadline(Date.now() + timeoutMs, () => handle.result());
    } catch (err) {
      failures.push(`${handle.workflowId}: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  return failures;
}

// ---------------------------------------------------------------------------------------------------
// 3. History

interface HistoryCount {
  events: number;
  runs: number;
  activitiesScheduled: number;
  localActivityMarkers: number;
}

/** Sums events over the whole continue-as-new chain, walking back from the latest run. */
async function historyOf(client: Client, workflowId: string): Promise<HistoryCount> {
  const count: HistoryCount = { events: 0, runs: 0, activitiesScheduled: 0, localActivityMarkers: 0 };
  let runId: string | undefined = (await client.workflow.getHandle(workflowId).describe()).runId;
  const E = proto.api.enums.v1.EventType;
  while (runId) {
    const history: proto.api.history.v1.IHistory = await client.workflow
      .getHandle(workflowId, runId)
      .fetchHistory();
    const events: proto.api.history.v1.IHistoryEvent[] = history.events ?? [];
    count.runs++;
    count.events += events.length;
    for (const e of events) {
      if (e.eventType === E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) count.activitiesScheduled++;
      if (e.eventType === E.EVENT_TYPE_MARKER_RECORDED) count.localActivityMarkers++;
    }
    runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }
  return count;
}

interface HistoryTask {
  seconds: number;
  workflowId: string;
  upstream: ExampleUpstream;
  createdAt: number;
}

async function startHistoryTask(
  gateway: McpHttpClient,
  upstream: ExampleUpstream,
  seconds: number,
): Promise<HistoryTask> {
  const reply = await gateway.callTool('slow_compute', { seconds, label: `history-${seconds}s` });
  const taskId = reply.result?.taskId;
  if (reply.result?.resultType !== 'task' || typeof taskId !== 'string') {
    throw new Error(`history task (${seconds} s) was not created: ${JSON.stringify(reply.error)}`);
  }
  return { seconds, workflowId: taskWorkflowId(taskKeyOf(taskId)), upstream, createdAt: Date.now() };
}

async function finishHistoryTask(client: Client, t: HistoryTask, poll: number) {
  await client.withDeadline(Date.now() + t.seconds * 1000 + 120_000, () =>
    client.workflow.getHandle(t.workflowId).result(),
  );
  const history = await historyOf(client, t.workflowId);
  return {
    seconds: t.seconds,
    ...history,
    upstreamPolls: t.upstream.stats.tasksGet,
    estimatedPolls: Math.floor((t.seconds * 1000) / poll) + 1,
  };
}

// ---------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const t0 = performance.now();
  note(`options ${JSON.stringify(opts)}`);
  const env = await startEnv(opts);
  note(`gateway up after ${Math.round(performance.now() - t0)} ms`);
  const args = { seconds: opts.seconds, label: 'bench' };

  // Warm-up: discovery cache, HTTP connections, workflow bundle/isolate, JIT. Not measured.
  if (opts.warmup > 0) {
    const warm = await createBatch(env.gateway, opts.warmup, { seconds: 0, label: 'warmup' });
    await createBatch(env.direct, opts.warmup, { seconds: 0, label: 'warmup' });
    if (warm.errors.length > 0) throw new Error(`warm-up failed: ${warm.errors[0]}`);
    await awaitWorkflows(
      env.client,
      warm.created.map((c) => c.taskId),
      60_000,
    );
  }

  // Phase 3 runs alongside phases 1-2: each task has its own upstream, so its poll count is its own.
  const histStarted = Promise.all([
    startHistoryTask(env.shortGateway, env.upstreams.short, opts.short),
    startHistoryTask(env.longGateway, env.upstreams.long, opts.long),
  ]);
  const [shortTask, longTask] = await histStarted;

  const gatewayLatencies: number[] = [];
  const directLatencies: number[] = [];
  const gatewayWall: number[] = [];
  const directWall: number[] = [];
  const creationErrors = { gateway: [] as string[], direct: [] as string[] };
  const visibility: Visibility[] = [];
  const watchFailures: string[] = [];
  const workflowFailures: string[] = [];
  const sem = new Semaphore(opts.pollConcurrency);
  const mainPollsBefore = env.upstreams.main.stats.tasksGet;
  let gatewayTasks = 0;

  for (let round = 1; round <= opts.rounds; round++) {
    // Direct first, then the gateway, both on a quiet system (the previous round's workflows are closed).
    const direct = await createBatch(env.direct, opts.n, args);
    const watches: Array<Promise<WatchOutcome>> = [];
    const gw = await createBatch(env.gateway, opts.n, args, (c) =>
      watches.push(watchUntilCompleted(env.gateway, sem, c, opts)),
    );
    directLatencies.push(...direct.latencies);
    gatewayLatencies.push(...gw.latencies);
    directWall.push(direct.wallMs);
    gatewayWall.push(gw.wallMs);
    creationErrors.direct.push(...direct.errors);
    creationErrors.gateway.push(...gw.errors);
    gatewayTasks += gw.created.length;

    const watched = await Promise.all(watches);
    for (const w of watched) {
      if (w.ok) visibility.push(w.v);
      else watchFailures.push(w.reason);
    }
    workflowFailures.push(
      ...(await awaitWorkflows(
        env.client,
        gw.created.map((c) => c.taskId),
        60_000,
      )),
    );
    const s = summarize(gw.latencies);
    const d = summarize(direct.latencies);
    note(
      `round ${round}/${opts.rounds}: gateway p50 ${s.p50} ms p99 ${s.p99} ms (${gw.errors.length} errors), ` +
        `direct p50 ${d.p50} ms p99 ${d.p99} ms; lag p50 ${summarize(visibility.map((v) => v.lagMs)).p50} ms`,
    );
  }
  const mainPolls = env.upstreams.main.stats.tasksGet - mainPollsBefore;

  note('waiting for the history tasks');
  const [short, long] = await Promise.all([
    finishHistoryTask(env.client, shortTask, opts.poll),
    finishHistoryTask(env.client, longTask, opts.poll),
  ]);

  // -------------------------------------------------------------------------------------------------
  // Report
  const g = summarize(gatewayLatencies);
  const d = summarize(directLatencies);
  const lag = summarize(visibility.map((v) => v.lagMs));
  const lagLower = summarize(visibility.map((v) => v.lagLowerMs));
  const clientPolls = summarize(visibility.map((v) => v.polls));
  const getMs = summarize(visibility.flatMap((v) => v.getMs));
  const gw: Summary = summarize(gatewayWall);
  const dw: Summary = summarize(directWall);

  const results = {
    bench: 'tasks',
    options: opts,
    machine: { cpus: os.cpus().length, node: process.version },
    creation: {
      samplesPerSide: g.count,
      gatewayMs: g,
      directMs: d,
      ratio: { p50: ratio(g.p50, d.p50), p99: ratio(g.p99, d.p99), mean: ratio(g.mean, d.mean) },
      batchWallMs: { gateway: gw.p50, direct: dw.p50 },
      throughputPerSec: {
        gateway: round((opts.n / gw.p50) * 1000, 0),
        direct: round((opts.n / dw.p50) * 1000, 0),
      },
      errors: { gateway: creationErrors.gateway.length, direct: creationErrors.direct.length },
    },
    visibility: {
      samples: lag.count,
      lagMs: lag,
      lagLowerBoundMs: lagLower,
      lagOverPoll: { p50: ratio(lag.p50, opts.poll), p99: ratio(lag.p99, opts.poll) },
      clientPollsPerTask: clientPolls.mean,
      tasksGetMs: { p50: getMs.p50, p99: getMs.p99 },
      upstreamPollsPerTask: ratio(mainPolls, gatewayTasks, 1),
      failures: watchFailures.length,
      workflowFailures: workflowFailures.length,
    },
    history: {
      short,
      long,
      eventRatio: ratio(long.events, short.events),
      pollRatio: ratio(long.upstreamPolls, short.upstreamPolls),
    },
    gatewayLog: { warnings: env.logSink.warnings, errors: env.logSink.errors },
    totalSeconds: 0,
  };

  const out: string[] = [];
  out.push(
    '',
    `TaskRouter task benchmark: N=${opts.n} x ${opts.rounds} rounds, slow_compute ${opts.seconds}s,`,
  );
  out.push(
    `upstream poll ${opts.poll} ms, history tasks ${opts.short}s / ${opts.long}s, ${os.cpus().length} CPUs`,
  );
  out.push('');
  out.push(
    table([
      ['1. creation (ms)', 'p50', 'p99', 'mean', 'max', 'batch wall', 'errors'],
      ['direct upstream', d.p50, d.p99, d.mean, d.max, dw.p50, creationErrors.direct.length],
      ['through gateway', g.p50, g.p99, g.mean, g.max, gw.p50, creationErrors.gateway.length],
      [
        'ratio gw/direct',
        results.creation.ratio.p50,
        results.creation.ratio.p99,
        results.creation.ratio.mean,
        ratio(g.max, d.max),
        ratio(gw.p50, dw.p50),
        '',
      ],
    ]),
  );
  out.push('');
  out.push(
    table([
      ['2. visibility lag (ms)', 'p50', 'p99', 'mean', 'max', '/poll p50', '/poll p99'],
      [
        'first seen completed',
        lag.p50,
        lag.p99,
        lag.mean,
        lag.max,
        ...Object.values(results.visibility.lagOverPoll),
      ],
      [
        'lower bound',
        lagLower.p50,
        lagLower.p99,
        lagLower.mean,
        lagLower.max,
        ratio(lagLower.p50, opts.poll),
        ratio(lagLower.p99, opts.poll),
      ],
    ]),
  );
  out.push(
    `   ${lag.count} tasks, ${watchFailures.length} not completed, ${workflowFailures.length} workflows not closed; ` +
      `client polls/task ${clientPolls.mean} (tasks/get p50 ${getMs.p50} ms, p99 ${getMs.p99} ms), ` +
      `upstream polls/task ${results.visibility.upstreamPollsPerTask}`,
  );
  out.push('');
  out.push(
    table([
      ['3. history per task', 'events', 'runs', 'activities', 'LA markers', 'upstream polls', 'est. polls'],
      [
        `${short.seconds}s task`,
        short.events,
        short.runs,
        short.activitiesScheduled,
        short.localActivityMarkers,
        short.upstreamPolls,
        short.estimatedPolls,
      ],
      [
        `${long.seconds}s task`,
        long.events,
        long.runs,
        long.activitiesScheduled,
        long.localActivityMarkers,
        long.upstreamPolls,
        long.estimatedPolls,
      ],
      [
        'ratio long/short',
        results.history.eventRatio,
        '',
        '',
        '',
        results.history.pollRatio,
        ratio(long.estimatedPolls, short.estimatedPolls),
      ],
    ]),
  );
  out.push('');
  out.push(`gateway log: ${env.logSink.warnings} warnings, ${env.logSink.errors} errors`);
  for (const e of [
    ...creationErrors.gateway,
    ...creationErrors.direct,
    ...watchFailures,
    ...workflowFailures,
  ].slice(0, 5)) {
    out.push(`  e.g. ${e}`);
  }
  for (const s of env.logSink.samples) out.push(`  log: ${s}`);
  results.totalSeconds = round((performance.now() - t0) / 1000, 1);
  out.push(`total ${results.totalSeconds} s`, '');
  process.stdout.write(`${out.join('\n')}\n`);
  process.stdout.write(`${JSON.stringify(results)}\n`);
}

runBench(main);
