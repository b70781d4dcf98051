/**
 * `npm run bench:tasks [-- --n 200 --levels 300,2000 --burst 200 --streams 4000 ...]` (`--help` lists all)
 *
 * The durable task path, measured on what users run: the bench starts an in-memory Temporal dev server,
 * four example upstreams as processes of their own (bench/upstream-process.ts) and the gateway as its
 * own process through the production entry point, `node dist/src/main/serve.js all` (built first when
 * dist/ is missing or stale), with default settings: a bootstrap file declares the users (each with a
 * personal access token) and project `bench` with the upstreams `example` (suggests polling every --poll
 * ms), `bulk` (long tasks, suggests --inflight-poll ms), `short` and `long` (one history task each, so
 * their poll counts are exact); authentication required, namespacing on, log at info. This process is
 * the client. In order:
 *
 * 1. Creation latency: task-aware `example.slow_compute {seconds}` calls (update-with-start, first
 *    upstream call, task recorded) and ordinary `tools/call`s of the same tool through the gateway
 *    (`{seconds: 0}`, a client without the Tasks extension, so answered synchronously) in ABBA blocks
 *    with --concurrency in flight. Targets: p50 <= 3x ordinary, p99 <= 4x ordinary. Then `tasks/get` of
 *    a working task (the gateway queries the workflow for its live state) against one of a completed
 *    task (read from the store), the same way. Each side with the CPU time the gateway and the Temporal
 *    dev server used per call during its blocks. And where a creation's time goes: the median time from
 *    the request to each event of the task workflow's history, up to the reply (20 tasks of 1).
 *    Tasks whose completion is measured (2, 3) run for their seconds plus up to one poll interval, at
 *    random, so that they complete anywhere between two of the gateway's polls of the upstream.
 * 2. Completion seen by polling: --visibility tasks of --seconds, --lanes at a time (each lane creates
 *    a task and watches it, then the next: a poll of a working task costs the gateway a Temporal query,
 *    so watching many at once would load the gateway with the measurement itself), each polled with
 *    `tasks/get` every --poll-every ms from the earliest moment it can be done; the lag is the first reply showing `completed` minus the upstream's own completion
 *    time (`lastUpdatedAt`, relayed by the gateway). Target: p99 <= 1.2x the effective poll interval
 *    (the upstream's suggestion within the gateway's default bounds).
 * 3. Completion pushed: --push tasks of --due seconds, all created first, then followed on
 *    `subscriptions/listen` streams with `notifications: { taskIds }` (--per-stream ids each); the lag is
 *    when the client read the `notifications/tasks` saying `completed` minus the upstream's
 *    `lastUpdatedAt`.
 * 4. Idle listen streams: --streams streams, up to 16 per user (the gateway's per-caller cap), each
 *    following one long task of its user, opened in four steps; the slope of the gateway's RSS
 *    (/proc/<pid>/status) over the number open gives bytes per stream and streams per GiB.
 * 5. Creation throughput: long `bulk.slow_compute` tasks are created by --clients concurrent clients
 *    until --levels tasks are in flight (or --ramp-seconds have passed: the level reached is reported),
 *    then, after --quiet seconds measuring the CPU the gateway and the Temporal dev server use for the
 *    tasks in flight alone, a burst of --burst more (at most --burst-seconds) is timed, with the CPU
 *    both processes used per task. Target: >= 100 tasks/s, and not falling as the number in flight
 *    grows (>= 0.9x the first level's rate).
 * 6. Temporal history per task: a --short s and a --long s task, started before 1 and running alongside;
 *    events summed over every run of the chain, and the upstream polls each took.
 *
 * Prints tables and, last, one JSON line with every figure. Leaves no processes behind.
 */
import { readdirSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import { Agent } from 'undici';
import { Cipher } from '../src/store/cipher';
import { taskKeyOf } from '../src/store/task-store';
import { createDataConverter } from '../src/temporal/codec';
import { taskWorkflowId } from '../src/workflows/messages';
import { note, onCleanup, runBench, startTemporal, tempDir } from './env';
import type { GatewayProcess, UpstreamProcess } from './processes';
import { benchUsers, buildIfNeeded, cpuMs, startGatewayProcess, startUpstreamProcess } from './processes';
import type { ListenStream, RpcReply, Summary } from './support';
import type { Created } from './task-support';
import { createTask, effectivePollMs, historyOf, many } from './task-support';
import {
  abba,
  mapLimit,
  McpHttpClient,
  percentile,
  ratio,
  replyProblem,
  round,
  sleep,
  summarize,
  table,
} from './support';

const TARGET = {
  creationP50: 3,
  creationP99: 4,
  tasksPerSecond: 100,
  /** Throughput at a higher in-flight level over the first level's: "not falling", with room for noise. */
  throughputKept: 0.9,
  visibilityP99: 1.2,
};
/** The gateway's cap on listen streams per caller and project (src/api/mcp/subscriptions.ts). */
const STREAMS_PER_CALLER = 16;

interface Options {
  n: number;
  concurrency: number;
  block: number;
  seconds: number;
  due: number;
  poll: number;
  visibility: number;
  pollEvery: number;
  lanes: number;
  push: number;
  perStream: number;
  streams: number;
  levels: number[];
  burst: number;
  clients: number;
  inflightPoll: number;
  quiet: number;
  rampSeconds: number;
  burstSeconds: number;
  short: number;
  long: number;
  warmup: number;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      n: { type: 'string', default: '200' },
      concurrency: { type: 'string', default: '1' },
      block: { type: 'string', default: '20' },
      seconds: { type: 'string', default: '1' },
      due: { type: 'string', default: '10' },
      poll: { type: 'string', default: '500' },
      visibility: { type: 'string', default: '45' },
      'poll-every': { type: 'string', default: '50' },
      lanes: { type: 'string', default: '3' },
      push: { type: 'string', default: '100' },
      'per-stream': { type: 'string', default: '25' },
      streams: { type: 'string', default: '4000' },
      levels: { type: 'string', default: '300,2000' },
      burst: { type: 'string', default: '200' },
      clients: { type: 'string', default: '32' },
      'inflight-poll': { type: 'string', default: '5000' },
      quiet: { type: 'string', default: '3' },
      'ramp-seconds': { type: 'string', default: '45' },
      'burst-seconds': { type: 'string', default: '20' },
      short: { type: 'string', default: '5' },
      long: { type: 'string', default: '60' },
      warmup: { type: 'string', default: '10' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(
      'usage: npm run bench:tasks -- [options]\n' +
        '  --n 200               creation latency: calls per side (task-aware and ordinary)\n' +
        '  --concurrency 1       creation latency: calls in flight\n' +
        '  --block 20            creation latency: calls per ABBA block\n' +
        '  --seconds 1           how long the tasks of 1 and 2 run\n' +
        '  --due 10              how long the tasks of 3 run (all are created before the first is due)\n' +
        '  --poll 500            pollIntervalMs the example upstream suggests\n' +
        '  --visibility 45       tasks polled with tasks/get until completed\n' +
        '  --poll-every 50       client poll period, ms; --lanes 3 tasks watched at a time\n' +
        '  --push 100            tasks followed on subscriptions/listen; --per-stream 25 task ids each\n' +
        '  --streams 4000        idle listen streams held for the memory figure\n' +
        '  --levels 300,2000     tasks in flight at which creation throughput is measured\n' +
        '  --burst 200           tasks created (and timed) at each level; --clients 32 concurrent clients\n' +
        '  --inflight-poll 5000  pollIntervalMs the bulk upstream suggests for its long tasks\n' +
        '  --quiet 3             seconds of quiet before each burst, to see what the tasks in flight cost\n' +
        '  --ramp-seconds 45     longest ramp to a level (the level reached is reported)\n' +
        '  --burst-seconds 20    no burst call starts later (tasks/s counts the tasks it created)\n' +
        '  --short 5 --long 60   history tasks, seconds\n' +
        '  --warmup 10           unmeasured calls per side first\n',
    );
    process.exit(0);
  }
  const num = (name: string, raw: string, min: number): number => {
    const v = Number(raw);
    if (!Number.isFinite(v) || v < min) throw new Error(`--${name} must be a number >= ${min} (got ${raw})`);
    return v;
  };
  const int = (name: string, raw: string, min: number) => Math.floor(num(name, raw, min));
  const levels = values.levels
    .split(',')
    .filter((l) => l.trim() !== '')
    .map((l) => int('levels', l, 0));
  return {
    n: int('n', values.n, 1),
    concurrency: int('concurrency', values.concurrency, 1),
    block: int('block', values.block, 1),
    seconds: num('seconds', values.seconds, 0),
    due: num('due', values.due, 0),
    poll: int('poll', values.poll, 1),
    visibility: int('visibility', values.visibility, 0),
    pollEvery: num('poll-every', values['poll-every'], 1),
    lanes: int('lanes', values.lanes, 1),
    push: int('push', values.push, 0),
    perStream: Math.min(100, int('per-stream', values['per-stream'], 1)),
    streams: int('streams', values.streams, 0),
    levels: [...levels].sort((a, b) => a - b),
    burst: int('burst', values.burst, 1),
    clients: int('clients', values.clients, 1),
    inflightPoll: int('inflight-poll', values['inflight-poll'], 1),
    quiet: num('quiet', values.quiet, 0.5),
    rampSeconds: num('ramp-seconds', values['ramp-seconds'], 0),
    burstSeconds: num('burst-seconds', values['burst-seconds'], 0),
    short: num('short', values.short, 0),
    long: num('long', values.long, 0),
    warmup: int('warmup', values.warmup, 0),
  };
}

// ---------------------------------------------------------------------------------------------------
// Clients

interface Clients {
  /** The main user, declaring the Tasks extension. */
  tasks: McpHttpClient;
  /** The main user, without the Tasks extension: ordinary calls. */
  plain: McpHttpClient;
  /** The main user's client for listen streams (a dispatcher without a body timeout). */
  streams: McpHttpClient;
}

// ---------------------------------------------------------------------------------------------------
// 1. Creation latency, and what a tasks/get costs

/** The processes whose CPU time is counted: the gateway and the Temporal dev server. */
interface Pids {
  gateway: number;
  temporal: number;
}

/** `abba` that also counts the CPU the gateway and Temporal used during each side's blocks, per call. */
async function abbaWithCpu<S extends string>(
  sides: readonly [S, S],
  opts: { n: number; block: number; concurrency: number },
  pids: Pids,
  op: (side: S, i: number) => Promise<void>,
) {
  const cpu = Object.fromEntries(sides.map((s) => [s, { gateway: 0, temporal: 0 }])) as Record<S, Pids>;
  let start = { gateway: 0, temporal: 0 };
  const samples = await abba(sides, opts, op, {
    blockStart: () => (start = { gateway: cpuMs(pids.gateway), temporal: cpuMs(pids.temporal) }),
    blockEnd: (side) => {
      cpu[side].gateway += cpuMs(pids.gateway) - start.gateway;
      cpu[side].temporal += cpuMs(pids.temporal) - start.temporal;
    },
  });
  const side = (s: S) => {
    const n = samples[s].latencies.length;
    return {
      ...summarize(samples[s].latencies),
      cpuMsPerCall: { gateway: round(cpu[s].gateway / n, 2), temporal: round(cpu[s].temporal / n, 2) },
    };
  };
  return {
    figures: Object.fromEntries(sides.map((s) => [s, side(s)])) as Record<S, ReturnType<typeof side>>,
    errors: sides.flatMap((s) => samples[s].errors),
  };
}

async function creationLatency(clients: Clients, opts: Options, pids: Pids) {
  note(
    `1. creation latency: ${opts.n} per side, concurrency ${opts.concurrency}, ABBA blocks of ${opts.block}`,
  );
  const timed: TimedCreation[] = [];
  const { figures, errors } = await abbaWithCpu(
    ['ordinary', 'task'] as const,
    { n: opts.n, block: opts.block, concurrency: opts.concurrency },
    pids,
    async (side, i) => {
      if (side === 'task') {
        const sentAt = Date.now();
        const c = await createTask(clients.tasks, 'example.slow_compute', {
          seconds: opts.seconds,
          label: `latency-${i}`,
        });
        timed.push({ taskId: c.taskId, sentAt, repliedAt: Date.now() });
        return;
      }
      const reply = await clients.plain.callTool('example.slow_compute', {
        seconds: 0,
        label: `ordinary-${i}`,
      });
      const problem = replyProblem(reply);
      if (problem !== undefined) throw new Error(problem);
      if (reply.result?.resultType === 'task') throw new Error('an ordinary call was answered with a task');
    },
  );
  const { ordinary, task } = figures;
  const r = {
    p50: ratio(task.p50, ordinary.p50),
    p99: ratio(task.p99, ordinary.p99),
    mean: ratio(task.mean, ordinary.mean),
  };
  return {
    ordinary,
    task,
    ratio: r,
    pass: { p50: r.p50 <= TARGET.creationP50, p99: r.p99 <= TARGET.creationP99 },
    errors,
    timed,
  };
}

interface TimedCreation {
  taskId: string;
  /** Wall clock (the Temporal dev server runs on the same machine). */
  sentAt: number;
  repliedAt: number;
}

/**
 * Where the time of a task creation goes: for the last `count` tasks of 1, the median time from the
 * client's request to each event of the task workflow's history up to the reply (`#2` is an event type's
 * second occurrence), read from the events' timestamps.
 */
async function creationTimeline(client: Client, timed: readonly TimedCreation[], count: number) {
  const E = proto.api.enums.v1.EventType;
  const offsets = new Map<string, number[]>();
  const sample = timed.slice(-count);
  for (const t of sample) {
    const history = await client.workflow.getHandle(taskWorkflowId(taskKeyOf(t.taskId))).fetchHistory();
    const seen = new Map<string, number>();
    for (const e of history.events ?? []) {
      const at = Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);
      if (at > t.repliedAt) break;
      const type = (E[e.eventType ?? 0] ?? String(e.eventType)).replace(/^EVENT_TYPE_/, '').toLowerCase();
      const k = (seen.get(type) ?? 0) + 1;
      seen.set(type, k);
      const key = k > 1 ? `${type} #${k}` : type;
      offsets.set(key, [...(offsets.get(key) ?? []), at - t.sentAt]);
    }
    offsets.set('reply read by the client', [
      ...(offsets.get('reply read by the client') ?? []),
      t.repliedAt - t.sentAt,
    ]);
  }
  return [...offsets.entries()]
    .filter(([, xs]) => xs.length >= sample.length / 2)
    .map(([event, xs]) => ({ event, ms: percentile(xs, 50) }))
    .sort((a, b) => a.ms - b.ms);
}

/**
 * `tasks/get` of a task still working (the gateway asks the workflow for its live state: a Temporal
 * query) and of a completed one (answered from the store), side by side.
 */
async function tasksGetLatency(clients: Clients, opts: Options, pids: Pids) {
  note(`1b. tasks/get: ${opts.n} per side, concurrency ${opts.concurrency}`);
  const working = await createTask(clients.tasks, 'example.slow_compute', { seconds: 3600, label: 'get' });
  const done = await createTask(clients.tasks, 'example.slow_compute', { seconds: 0, label: 'get' });
  for (let tries = 0; ; tries++) {
    const r = await clients.tasks.getTask(done.taskId);
    if (r.result?.status === 'completed') break;
    if (tries > 600) throw new Error(`task ${done.taskId} did not complete: ${JSON.stringify(r.result)}`);
    await sleep(100);
  }
  const ids = { working: working.taskId, completed: done.taskId };
  return abbaWithCpu(
    ['completed', 'working'] as const,
    { n: opts.n, block: opts.block, concurrency: opts.concurrency },
    pids,
    async (side) => {
      const reply = await clients.tasks.getTask(ids[side]);
      const problem = replyProblem(reply);
      if (problem !== undefined) throw new Error(problem);
      if (reply.result?.status !== (side === 'working' ? 'working' : 'completed'))
        throw new Error(`tasks/get: status ${String(reply.result?.status)}`);
    },
  );
}

// ---------------------------------------------------------------------------------------------------
// 2. Completion seen by polling

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
  task: Created,
  seconds: number,
  opts: Options,
): Promise<WatchOutcome> {
  // Neither the upstream (created after the gateway's createdAt) nor the gateway can show it done earlier.
  const earliest = task.createdAtMs + seconds * 1000;
  const deadline = earliest + 120_000;
  await sleep(earliest - Date.now());
  let prevSentAt: number | undefined;
  const getMs: number[] = [];
  let polls = 0;
  let errors = 0;
  for (;;) {
    const sentAt = Date.now();
    let reply: RpcReply | undefined;
    try {
      reply = await client.getTask(task.taskId);
    } catch {
      reply = undefined;
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

/**
 * How long a task whose completion is measured runs: `seconds` plus up to one poll interval, at random.
 * The gateway polls a task's upstream every interval from its creation, so a task lasting a whole number
 * of intervals would always complete just before a poll.
 */
function jittered(seconds: number, opts: Options): number {
  return round(seconds + (Math.random() * effectivePollMs(opts.poll)) / 1000, 3);
}

/**
 * `count` tasks of about `--due` seconds, all created before the first one is due (so creating them does
 * not load the gateway while completions are measured).
 */
async function dueTasks(clients: Clients, opts: Options, count: number, label: string) {
  const created = await many(count, 8, (i) =>
    createTask(clients.tasks, 'example.slow_compute', {
      seconds: jittered(opts.due, opts),
      label: `${label}-${i}`,
    }),
  );
  const overlap =
    created.wallMs > opts.due * 1000
      ? [`creating the ${label} tasks took ${round(created.wallMs / 1000, 1)} s, longer than --due`]
      : [];
  return { created: created.ok, errors: [...created.errors, ...overlap] };
}

async function completionByPolling(clients: Clients, opts: Options) {
  note(
    `2. completion seen by polling: ${opts.visibility} tasks of ${opts.seconds} s, ${opts.lanes} at a time`,
  );
  const seen: Visibility[] = [];
  const failures: string[] = [];
  await mapLimit(
    Array.from({ length: opts.visibility }, (_, i) => i),
    opts.lanes,
    async (i) => {
      let task: Created;
      const seconds = jittered(opts.seconds, opts);
      try {
        task = await createTask(clients.tasks, 'example.slow_compute', { seconds, label: `seen-${i}` });
      } catch (err) {
        failures.push(err instanceof Error ? err.message : String(err));
        return;
      }
      const w = await watchUntilCompleted(clients.tasks, task, seconds, opts);
      if (w.ok) seen.push(w.v);
      else failures.push(w.reason);
    },
  );
  return {
    lag: summarize(seen.map((v) => v.lagMs)),
    lagLower: summarize(seen.map((v) => v.lagLowerMs)),
    clientPollsPerTask: summarize(seen.map((v) => v.polls)).mean,
    tasksGetMs: summarize(seen.flatMap((v) => v.getMs)),
    failures,
  };
}

// ---------------------------------------------------------------------------------------------------
// 3. Completion pushed

async function completionByPush(clients: Clients, opts: Options) {
  note(
    `3. completion pushed: ${opts.push} tasks of ${opts.due} s on listen streams of ${opts.perStream} ids`,
  );
  const created = await dueTasks(clients, opts, opts.push, 'push');
  const failures = [...created.errors];
  /** When the stream following each task was acknowledged: a completion before that is not a push. */
  const followedSince = new Map<string, number>();
  const lags = new Map<string, number>();
  let early = 0;
  const onMessage = (m: Record<string, unknown>, receivedAt: number) => {
    if (m.method !== 'notifications/tasks') return;
    const p = m.params as { taskId?: string; status?: string; lastUpdatedAt?: string };
    if (p.status !== 'completed' || !p.taskId || lags.has(p.taskId)) return;
    const done = Date.parse(String(p.lastUpdatedAt));
    if (done < (followedSince.get(p.taskId) ?? Infinity)) early++;
    else lags.set(p.taskId, receivedAt - done);
  };
  const ids = created.created.map((c) => c.taskId);
  const streams: ListenStream[] = [];
  try {
    for (let i = 0; i < ids.length; i += opts.perStream) {
      const stream = await clients.streams.listen({ taskIds: ids.slice(i, i + opts.perStream) }, onMessage);
      streams.push(stream);
      const ackAt = Date.now();
      for (const id of (stream.acknowledged.taskIds ?? []) as string[]) followedSince.set(id, ackAt);
    }
    const lastDue =
      Math.max(...created.created.map((c) => c.createdAtMs)) +
      (opts.due + effectivePollMs(opts.poll) / 1000) * 1000;
    while (lags.size + early < followedSince.size && Date.now() < lastDue + 30_000) await sleep(50);
  } finally {
    await Promise.all(streams.map((s) => s.close()));
  }
  const honoured = followedSince.size;
  if (honoured < ids.length)
    failures.push(`${ids.length - honoured} task ids were not honoured by the listen`);
  if (early > 0) failures.push(`${early} tasks completed before their stream was acknowledged`);
  if (lags.size + early < honoured)
    failures.push(`${honoured - lags.size - early} completions were never pushed`);
  return { lag: summarize([...lags.values()]), streams: streams.length, failures };
}

// ---------------------------------------------------------------------------------------------------
// 4. Idle listen streams

/** Median of three RSS readings 300 ms apart, bytes. */
async function steadyRss(gateway: GatewayProcess): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < 3; i++) {
    if (i > 0) await sleep(300);
    xs.push(gateway.rssBytes());
  }
  return percentile(xs, 50);
}

const openFds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;

async function idleStreams(
  opts: Options,
  gateway: GatewayProcess,
  streamUsers: readonly McpHttpClient[],
  taskUsers: readonly McpHttpClient[],
) {
  note(`4. idle listen streams: ${opts.streams} streams of ${streamUsers.length} users`);
  // Each user follows one long task of its own (created before the baseline, so only streams are counted).
  const tasks = await mapLimit(taskUsers, opts.clients, (c) =>
    createTask(c, 'bulk.slow_compute', { seconds: 3600, label: 'followed' }),
  );
  await sleep(2000);
  const before = { rss: await steadyRss(gateway), fds: openFds(gateway.pid) };
  // RSS after each quarter of the streams: the slope of a line through the five points is less at the
  // mercy of one garbage collection than a single before/after difference.
  const points: Array<[number, number]> = [[0, before.rss]];
  const streams: ListenStream[] = [];
  const errors: string[] = [];
  const open = async (i: number) => {
    const user = Math.floor(i / STREAMS_PER_CALLER);
    const client = streamUsers[user] as McpHttpClient;
    try {
      const stream = await client.listen({ taskIds: [(tasks[user] as Created).taskId] });
      streams.push(stream);
      if (((stream.acknowledged.taskIds ?? []) as string[]).length !== 1) errors.push('task id not honoured');
    } catch (err) {
      errors.push(err instanceof Error ? err.message : String(err));
    }
  };
  try {
    for (let step = 1; step <= 4; step++) {
      const from = Math.round(((step - 1) * opts.streams) / 4);
      const to = Math.round((step * opts.streams) / 4);
      await mapLimit(
        Array.from({ length: to - from }, (_, k) => from + k),
        opts.clients,
        open,
      );
      await sleep(1000);
      points.push([streams.length, await steadyRss(gateway)]);
    }
    const after = { rss: (points.at(-1) as [number, number])[1], fds: openFds(gateway.pid) };
    const bytesPerStream = slope(points);
    return {
      streams: streams.length,
      rssBeforeMB: round(before.rss / 2 ** 20, 1),
      rssAfterMB: round(after.rss / 2 ** 20, 1),
      rssMB: points.map(([n, rss]) => [n, round(rss / 2 ** 20, 1)]),
      kbPerStream: round(bytesPerStream / 1024, 1),
      streamsPerGiB: bytesPerStream > 0 ? round(2 ** 30 / bytesPerStream, -2) : Number.NaN,
      fdsAdded: after.fds - before.fds,
      errors,
    };
  } finally {
    await Promise.all(streams.map((s) => s.close()));
  }
}

/** Least-squares slope of y over x. */
function slope(points: ReadonlyArray<readonly [number, number]>): number {
  const n = points.length;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  const sxy = points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0);
  const sxx = points.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  return sxx > 0 ? sxy / sxx : Number.NaN;
}

// ---------------------------------------------------------------------------------------------------
// 5. Creation throughput at in-flight levels

interface Level {
  /** The level asked for, and the number in flight the ramp reached (within --ramp-seconds). */
  level: number;
  inFlight: number;
  rampTasks: number;
  rampPerSecond: number;
  tasks: number;
  wallSeconds: number;
  tasksPerSecond: number;
  latencyMs: Summary;
  errors: string[];
  rssMB: number;
  /** CPU time per task of the burst, ms, of the gateway process and of the Temporal dev server. */
  cpuMsPerTask: { gateway: number; temporal: number };
  /** CPU used while nothing but the tasks in flight ran (before the burst), % of one core. */
  idleCpuPercent: { gateway: number; temporal: number };
}

/** CPU the gateway and the Temporal dev server use over `ms` of quiet, % of one core. */
async function quietCpu(pids: { gateway: GatewayProcess; temporal: number }, ms: number) {
  const before = { gateway: cpuMs(pids.gateway.pid), temporal: cpuMs(pids.temporal) };
  const started = performance.now();
  await sleep(ms);
  const elapsed = performance.now() - started;
  return {
    gateway: round(((cpuMs(pids.gateway.pid) - before.gateway) / elapsed) * 100, 0),
    temporal: round(((cpuMs(pids.temporal) - before.temporal) / elapsed) * 100, 0),
  };
}

async function throughput(
  clients: Clients,
  opts: Options,
  pids: { gateway: GatewayProcess; temporal: number },
  alreadyInFlight: number,
) {
  const { gateway } = pids;
  const levels: Level[] = [];
  let inFlight = alreadyInFlight;
  const create = (label: string) => () =>
    createTask(clients.tasks, 'bulk.slow_compute', { seconds: 3600, label });
  for (const level of opts.levels) {
    const rampCount = Math.max(0, level - inFlight);
    note(`5. throughput: ${rampCount} tasks to reach ${level} in flight, then a burst of ${opts.burst}`);
    const ramp = await many(rampCount, opts.clients, create('ramp'), opts.rampSeconds);
    inFlight += ramp.ok.length;
    // Let the ramp's watch activities start, then see what the tasks in flight cost with nothing else going on.
    await sleep(2000);
    const idleCpuPercent = await quietCpu(pids, opts.quiet * 1000);
    const at = inFlight;
    const cpuBefore = { gateway: cpuMs(gateway.pid), temporal: cpuMs(pids.temporal) };
    const burst = await many(opts.burst, opts.clients, create('burst'), opts.burstSeconds);
    const perTask = (pid: number, before: number) => round((cpuMs(pid) - before) / burst.ok.length, 2);
    const cpuMsPerTask = {
      gateway: perTask(gateway.pid, cpuBefore.gateway),
      temporal: perTask(pids.temporal, cpuBefore.temporal),
    };
    inFlight += burst.ok.length;
    levels.push({
      level,
      inFlight: at,
      rampTasks: ramp.ok.length,
      rampPerSecond: round((ramp.ok.length / ramp.wallMs) * 1000, 0),
      tasks: burst.ok.length,
      wallSeconds: round(burst.wallMs / 1000, 2),
      tasksPerSecond: round((burst.ok.length / burst.wallMs) * 1000, 0),
      latencyMs: summarize(burst.ok.map((c) => c.latencyMs)),
      errors: [...ramp.errors, ...burst.errors],
      rssMB: round(gateway.rssBytes() / 2 ** 20, 0),
      cpuMsPerTask,
      idleCpuPercent,
    });
    const l = levels.at(-1) as Level;
    note(
      `   at ${at} in flight: ${l.tasksPerSecond} tasks/s, p50 ${l.latencyMs.p50} ms, ${l.errors.length} errors`,
    );
  }
  const first = levels[0];
  const rates = levels.map((l) => l.tasksPerSecond);
  return {
    levels,
    inFlightAtEnd: inFlight,
    pass: {
      rate: rates.every((r) => r >= TARGET.tasksPerSecond),
      kept:
        first !== undefined &&
        levels.every((l) => l.tasksPerSecond >= first.tasksPerSecond * TARGET.throughputKept),
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// 6. History

interface HistoryTask {
  seconds: number;
  workflowId: string;
  upstream: UpstreamProcess;
}

async function startHistoryTask(
  client: McpHttpClient,
  alias: string,
  upstream: UpstreamProcess,
  seconds: number,
): Promise<HistoryTask> {
  const c = await createTask(client, `${alias}.slow_compute`, { seconds, label: `history-${seconds}s` });
  return { seconds, workflowId: taskWorkflowId(taskKeyOf(c.taskId)), upstream };
}

async function finishHistoryTask(client: Client, t: HistoryTask, poll: number) {
  await client.withDeadline(Date.now() + t.seconds * 1000 + 120_000, () =>
    client.workflow.getHandle(t.workflowId).result(),
  );
  const history = await historyOf(client, t.workflowId);
  return {
    seconds: t.seconds,
    ...history,
    upstreamPolls: (await t.upstream.stats()).tasksGet,
    estimatedPolls: Math.floor((t.seconds * 1000) / effectivePollMs(poll)) + 1,
  };
}

// ---------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const t0 = performance.now();
  note(`options ${JSON.stringify(opts)}`);
  buildIfNeeded();
  const temporal = await startTemporal();
  const dir = tempDir();
  const [example, bulk, short, long] = await Promise.all([
    startUpstreamProcess('bench-upstream', { pollIntervalMs: opts.poll }),
    startUpstreamProcess('bench-upstream-bulk', { pollIntervalMs: opts.inflightPoll }),
    startUpstreamProcess('bench-upstream-short', { pollIntervalMs: opts.poll }),
    startUpstreamProcess('bench-upstream-long', { pollIntervalMs: opts.poll }),
  ]);
  // The main user, then enough users for the idle streams (the gateway caps streams per caller).
  const users = benchUsers(1 + Math.ceil(opts.streams / STREAMS_PER_CALLER));
  const gateway = await startGatewayProcess({
    temporal,
    dir,
    users,
    projects: [
      {
        slug: 'bench',
        upstreams: [
          { alias: 'example', url: example.url },
          { alias: 'bulk', url: bulk.url },
          { alias: 'short', url: short.url },
          { alias: 'long', url: long.url },
        ],
      },
    ],
    // Thousands of idle streams on one project are the point here: above the per-project default (256).
    sections: { streams: { maxPerProject: opts.streams + opts.push } },
  });
  note(`gateway up after ${Math.round(performance.now() - t0)} ms`);

  const agent = new Agent({ keepAliveTimeout: 30_000, headersTimeout: 120_000, bodyTimeout: 120_000 });
  const streamAgent = new Agent({ keepAliveTimeout: 30_000, headersTimeout: 120_000, bodyTimeout: 0 });
  onCleanup('http agents', async () => {
    await Promise.all([agent.close(), streamAgent.destroy()]);
  });
  const endpoint = `${gateway.url}/v1/mcp/bench`;
  const [main, ...streamUsers] = users;
  if (!main) throw new Error('no user');
  const clients: Clients = {
    tasks: new McpHttpClient(endpoint, agent, { token: main.token }),
    plain: new McpHttpClient(endpoint, agent, { tasks: false, token: main.token }),
    streams: new McpHttpClient(endpoint, streamAgent, { token: main.token }),
  };

  const connection = await Connection.connect({ address: temporal.address });
  onCleanup('temporal client', () => connection.close());
  const temporalClient = new Client({
    connection,
    namespace: temporal.namespace,
    dataConverter: createDataConverter(new Cipher(gateway.config.encryption)),
  });

  // Warm-up: discovery, HTTP connections, workflow isolate, JIT. Not measured.
  if (opts.warmup > 0) {
    note(`warm-up: ${opts.warmup} calls per side`);
    const warm = await many(opts.warmup, 4, () =>
      createTask(clients.tasks, 'example.slow_compute', { seconds: 0, label: 'warmup' }),
    );
    await many(opts.warmup, 4, () => clients.plain.callTool('example.slow_compute', { seconds: 0 }));
    if (warm.errors.length > 0) throw new Error(`warm-up failed: ${warm.errors[0]}`);
  }

  // 6 runs alongside the rest: each history task has its own upstream, so its poll count is its own.
  const historyTasks = await Promise.all([
    startHistoryTask(clients.tasks, 'short', short, opts.short),
    startHistoryTask(clients.tasks, 'long', long, opts.long),
  ]);

  const pids: Pids = { gateway: gateway.pid, temporal: temporal.pid };
  const creation = await creationLatency(clients, opts, pids);
  const timeline = await creationTimeline(temporalClient, creation.timed, 20);
  const gets = await tasksGetLatency(clients, opts, pids);
  const polling = opts.visibility > 0 ? await completionByPolling(clients, opts) : undefined;
  const push = opts.push > 0 ? await completionByPush(clients, opts) : undefined;
  const streamClients = streamUsers.map((u) => new McpHttpClient(endpoint, streamAgent, { token: u.token }));
  const taskClients = streamUsers.map((u) => new McpHttpClient(endpoint, agent, { token: u.token }));
  const idle = opts.streams > 0 ? await idleStreams(opts, gateway, streamClients, taskClients) : undefined;
  const inFlightBefore = opts.streams > 0 ? streamUsers.length : 0;
  const tput =
    opts.levels.length > 0
      ? await throughput(clients, opts, { gateway, temporal: temporal.pid }, inFlightBefore)
      : undefined;

  note('waiting for the history tasks');
  const [shortHistory, longHistory] = await Promise.all(
    historyTasks.map((t) => finishHistoryTask(temporalClient, t, opts.poll)),
  );
  const history = {
    short: shortHistory,
    long: longHistory,
    eventRatio: ratio(longHistory?.events ?? Number.NaN, shortHistory?.events ?? Number.NaN),
    pollRatio: ratio(longHistory?.upstreamPolls ?? Number.NaN, shortHistory?.upstreamPolls ?? Number.NaN),
  };
  const log = gateway.log();

  // -------------------------------------------------------------------------------------------------
  // Report
  const pollMs = effectivePollMs(opts.poll);
  const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL');
  const out: string[] = [''];
  out.push(
    `bench:tasks  gateway: serve all, default settings, token auth; upstream suggests polling every ` +
      `${opts.poll} ms (effective ${pollMs} ms), long tasks every ${opts.inflightPoll} ms ` +
      `(effective ${effectivePollMs(opts.inflightPoll)} ms); node ${process.version}, ${os.cpus().length} cpus, ` +
      `load ${os.loadavg()[0]?.toFixed(1)}`,
  );
  out.push('');
  const c = creation;
  type Row = { count: number; p50: number; p99: number; mean: number; max: number; cpuMsPerCall: Pids };
  const row = (label: string, x: Row) => [
    label,
    x.count,
    x.p50,
    x.p99,
    x.mean,
    x.max,
    x.cpuMsPerCall.gateway,
    x.cpuMsPerCall.temporal,
  ];
  const g = gets.figures;
  out.push(
    table([
      [
        `1. latency (ms), concurrency ${opts.concurrency}`,
        'n',
        'p50',
        'p99',
        'mean',
        'max',
        'CPU ms gw',
        'temporal',
      ],
      row('ordinary tools/call', c.ordinary),
      row('task creation', c.task),
      ['ratio task/ordinary', '', c.ratio.p50, c.ratio.p99, c.ratio.mean, '', '', ''],
      row('tasks/get, completed task', g.completed),
      row('tasks/get, working task', g.working),
      [
        'ratio working/completed',
        '',
        ratio(g.working.p50, g.completed.p50),
        ratio(g.working.p99, g.completed.p99),
        ratio(g.working.mean, g.completed.mean),
        '',
        '',
        '',
      ],
    ]),
  );
  out.push(
    `   p50 ratio ${c.ratio.p50} (target <= ${TARGET.creationP50}): ${verdict(c.pass.p50)}; ` +
      `p99 ratio ${c.ratio.p99} (target <= ${TARGET.creationP99}): ${verdict(c.pass.p99)}; ` +
      `${c.errors.length + gets.errors.length} errors; CPU ms per call of the gateway and Temporal processes`,
  );
  out.push('');
  if (timeline.length > 0) {
    out.push(
      table([
        ['1c. where a task creation goes', 'ms after the request (median of 20)'],
        ...timeline.map((t) => [`  ${t.event}`, t.ms]),
      ]),
    );
    out.push('');
  }
  if (polling || push) {
    const rows: Array<Array<string | number>> = [
      [
        `2-3. completion seen (ms after the upstream's)`,
        'n',
        'p50',
        'p99',
        'mean',
        'max',
        'p50/interval',
        'p99/interval',
      ],
    ];
    if (polling) {
      const l = polling.lag;
      rows.push([
        'polling tasks/get',
        l.count,
        l.p50,
        l.p99,
        l.mean,
        l.max,
        ratio(l.p50, pollMs),
        ratio(l.p99, pollMs),
      ]);
      const lo = polling.lagLower;
      rows.push([
        '  lower bound',
        lo.count,
        lo.p50,
        lo.p99,
        lo.mean,
        lo.max,
        ratio(lo.p50, pollMs),
        ratio(lo.p99, pollMs),
      ]);
    }
    if (push) {
      const l = push.lag;
      rows.push([
        'push notifications/tasks',
        l.count,
        l.p50,
        l.p99,
        l.mean,
        l.max,
        ratio(l.p50, pollMs),
        ratio(l.p99, pollMs),
      ]);
    }
    out.push(table(rows));
    if (polling) {
      out.push(
        `   polling: p99 ${ratio(polling.lag.p99, pollMs)}x the ${pollMs} ms poll interval ` +
          `(target <= ${TARGET.visibilityP99}): ${verdict(ratio(polling.lag.p99, pollMs) <= TARGET.visibilityP99)}; ` +
          `every ${opts.pollEvery} ms, ${opts.lanes} tasks at a time, ${polling.clientPollsPerTask} polls/task, tasks/get p50 ` +
          `${polling.tasksGetMs.p50} ms p99 ${polling.tasksGetMs.p99} ms; ${polling.failures.length} failures`,
      );
    }
    if (push) out.push(`   push: ${push.streams} listen streams; ${push.failures.length} failures`);
    out.push('');
  }
  if (idle) {
    out.push(
      table([
        [
          '4. idle listen streams',
          'streams',
          'RSS before MB',
          'RSS after MB',
          'KB/stream',
          'streams/GiB',
          'fds added',
        ],
        [
          'following one task each',
          idle.streams,
          idle.rssBeforeMB,
          idle.rssAfterMB,
          idle.kbPerStream,
          idle.streamsPerGiB,
          idle.fdsAdded,
        ],
      ]),
    );
    out.push(`   ${idle.errors.length} errors`);
    out.push('');
  }
  if (tput) {
    const rows: Array<Array<string | number>> = [
      [
        `5. throughput, ${opts.clients} clients`,
        'ramp',
        'ramp/s',
        'burst',
        'wall s',
        'tasks/s',
        'p50 ms',
        'p99 ms',
        'errors',
        'RSS MB',
        'CPU ms/task gw',
        'temporal',
        'idle CPU % gw',
        'temporal',
      ],
    ];
    for (const l of tput.levels) {
      rows.push([
        l.inFlight < l.level
          ? `at ${l.inFlight} in flight (ramp cut, of ${l.level})`
          : `at ${l.inFlight} in flight`,
        l.rampTasks,
        l.rampPerSecond,
        l.tasks,
        l.wallSeconds,
        l.tasksPerSecond,
        l.latencyMs.p50,
        l.latencyMs.p99,
        l.errors.length,
        l.rssMB,
        l.cpuMsPerTask.gateway,
        l.cpuMsPerTask.temporal,
        l.idleCpuPercent.gateway,
        l.idleCpuPercent.temporal,
      ]);
    }
    out.push(table(rows));
    const first = tput.levels[0];
    const last = tput.levels.at(-1);
    out.push(
      `   tasks/s >= ${TARGET.tasksPerSecond} at every level: ${verdict(tput.pass.rate)}; ` +
        `not falling (>= ${TARGET.throughputKept}x the first level): ${verdict(tput.pass.kept)}` +
        (first && last && last !== first ? ` (${ratio(last.tasksPerSecond, first.tasksPerSecond)}x)` : ''),
    );
    out.push('');
  }
  out.push(
    table([
      ['6. history per task', 'events', 'runs', 'activities', 'LA markers', 'upstream polls', 'est. polls'],
      ...[shortHistory, longHistory].map((h) => [
        `${h?.seconds}s task`,
        h?.events ?? '',
        h?.runs ?? '',
        h?.activitiesScheduled ?? '',
        h?.localActivityMarkers ?? '',
        h?.upstreamPolls ?? '',
        h?.estimatedPolls ?? '',
      ]),
      [
        'ratio long/short',
        history.eventRatio,
        '',
        '',
        '',
        history.pollRatio,
        ratio(longHistory?.estimatedPolls ?? Number.NaN, shortHistory?.estimatedPolls ?? Number.NaN),
      ],
    ]),
  );
  out.push('');
  const errors = [
    ...creation.errors,
    ...gets.errors,
    ...(polling?.failures ?? []),
    ...(push?.failures ?? []),
    ...(idle?.errors ?? []),
    ...(tput?.levels.flatMap((l) => l.errors) ?? []),
  ];
  out.push(`errors: ${errors.length}; gateway log: ${log.warnings} warnings, ${log.errors} errors`);
  for (const e of errors.slice(0, 5)) out.push(`  e.g. ${e}`);
  for (const s of log.samples) out.push(`  log: ${s}`);
  const totalSeconds = round((performance.now() - t0) / 1000, 1);
  out.push(`total ${totalSeconds} s`, '');
  process.stdout.write(`${out.join('\n')}\n`);
  const strip = <T extends { errors?: string[]; failures?: string[] }>(x: T | undefined) =>
    x && { ...x, errors: x.errors?.length, failures: x.failures?.length };
  process.stdout.write(
    `${JSON.stringify({
      bench: 'tasks',
      options: opts,
      machine: { cpus: os.cpus().length, node: process.version, loadavg: os.loadavg() },
      effectivePollMs: pollMs,
      creation: { ...strip(creation), timed: undefined },
      creationTimeline: timeline,
      tasksGet: strip(gets),
      polling: strip(polling),
      push: strip(push),
      idleStreams: strip(idle),
      throughput: tput && { ...tput, levels: tput.levels.map((l) => ({ ...l, errors: l.errors.length })) },
      history,
      target: TARGET,
      errors: errors.length,
      gatewayLog: { warnings: log.warnings, errors: log.errors },
      totalSeconds,
    })}\n`,
  );
}

runBench(main);
