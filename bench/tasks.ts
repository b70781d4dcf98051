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
 *
 * This file starts the processes and runs the parts in order; each part is a module of its own
 * (bench/tasks-latency.ts 1, tasks-completion.ts 2 and 3, tasks-streams.ts 4, tasks-throughput.ts 5,
 * tasks-history.ts 6), with the options and targets in tasks-options.ts and the report in tasks-report.ts.
 * Hosted tasks (issue 24: ordinary tools the gateway runs as its own tasks) are measured apart, by
 * bench/hosted.ts (`npm run bench:hosted`), which needs an upstream without tasks and its own aliases.
 */
import { performance } from 'node:perf_hooks';
import { note, runBench } from './env';
import {
  benchProject,
  benchUsers,
  callAndStreamAgents,
  gatewayTemporalClient,
  startBench,
  startGatewayProcess,
  startUpstreamProcess,
} from './processes';
import { McpHttpClient, ratio } from './support';
import { createTask, many } from './task-support';
import { completionByPolling, completionByPush } from './tasks-completion';
import { finishHistoryTask, startHistoryTask } from './tasks-history';
import { creationLatency, creationTimeline, tasksGetLatency } from './tasks-latency';
import type { Clients, Pids } from './tasks-options';
import { parseOptions, STREAMS_PER_CALLER } from './tasks-options';
import { printReport } from './tasks-report';
import { idleStreams } from './tasks-streams';
import { throughput } from './tasks-throughput';

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const { t0, temporal, dir } = await startBench(opts);
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
    projects: [benchProject({ example, bulk, short, long })],
    // Thousands of idle streams on one project are the point here: above the per-project default (256).
    sections: { streams: { maxPerProject: opts.streams + opts.push } },
  });
  note(`gateway up after ${Math.round(performance.now() - t0)} ms`);

  const { agent, streamAgent } = callAndStreamAgents();
  const endpoint = `${gateway.url}/v1/mcp/bench`;
  const [main, ...streamUsers] = users;
  if (!main) throw new Error('no user');
  const clients: Clients = {
    tasks: new McpHttpClient(endpoint, agent, { token: main.token }),
    plain: new McpHttpClient(endpoint, agent, { tasks: false, token: main.token }),
    streams: new McpHttpClient(endpoint, streamAgent, { token: main.token }),
  };

  const temporalClient = await gatewayTemporalClient(temporal, gateway);

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
  printReport({ opts, t0, creation, timeline, gets, polling, push, idle, tput, history, log });
}

runBench(main);
