/**
 * bench:tasks's report (see bench/tasks.ts): the tables of every part's figures with the verdicts against
 * the targets, then one JSON line with every figure.
 */
import os from 'node:os';
import type { GatewayProcess } from './processes';
import type { Summary } from './support';
import { finishReport, machine, ratio, table } from './support';
import { effectivePollMs } from './task-support';
import type { completionByPolling, completionByPush } from './tasks-completion';
import type { finishHistoryTask } from './tasks-history';
import type { creationLatency, creationTimeline, tasksGetLatency } from './tasks-latency';
import type { Options, Pids } from './tasks-options';
import { TARGET } from './tasks-options';
import type { idleStreams } from './tasks-streams';
import type { throughput } from './tasks-throughput';

type Figures<F extends (...args: never[]) => Promise<unknown>> = Awaited<ReturnType<F>>;
type History = Figures<typeof finishHistoryTask>;

/** Everything bench:tasks measured, as the report prints it. */
export interface TasksResults {
  opts: Options;
  /** performance.now() when the bench started. */
  t0: number;
  creation: Figures<typeof creationLatency>;
  timeline: Figures<typeof creationTimeline>;
  gets: Figures<typeof tasksGetLatency>;
  polling: Figures<typeof completionByPolling> | undefined;
  push: Figures<typeof completionByPush> | undefined;
  idle: Figures<typeof idleStreams> | undefined;
  tput: Figures<typeof throughput> | undefined;
  history: { short: History | undefined; long: History | undefined; eventRatio: number; pollRatio: number };
  log: ReturnType<GatewayProcess['log']>;
}

/** Prints the tables, then the JSON line. */
/** A row of the completion table: how long after the upstream's completion the client saw it. */
function lagRow(label: string, l: Summary, pollMs: number): Array<string | number> {
  return [label, l.count, l.p50, l.p99, l.mean, l.max, ratio(l.p50, pollMs), ratio(l.p99, pollMs)];
}

export function printReport(results: TasksResults): void {
  const { opts, t0, creation, timeline, gets, polling, push, idle, tput, history, log } = results;
  const { short: shortHistory, long: longHistory } = history;
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
      rows.push(lagRow('polling tasks/get', polling.lag, pollMs));
      rows.push(lagRow('  lower bound', polling.lagLower, pollMs));
    }
    if (push) {
      rows.push(lagRow('push notifications/tasks', push.lag, pollMs));
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
  const totalSeconds = finishReport(out, { count: errors.length, examples: errors }, log, t0);
  const strip = <T extends { errors?: string[]; failures?: string[] }>(x: T | undefined) =>
    x && { ...x, errors: x.errors?.length, failures: x.failures?.length };
  process.stdout.write(
    `${JSON.stringify({
      bench: 'tasks',
      options: opts,
      machine: machine(),
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
