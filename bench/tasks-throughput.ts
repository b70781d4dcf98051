/**
 * bench:tasks, part 5 (see bench/tasks.ts): task creations per second at growing numbers of tasks in
 * flight, with what the tasks in flight cost the gateway and Temporal while nothing else runs.
 */
import { performance } from 'node:perf_hooks';
import { note } from './env';
import type { GatewayProcess } from './processes';
import { cpuMs } from './processes';
import type { Summary } from './support';
import { round, sleep, summarize } from './support';
import { createTask, many } from './task-support';
import type { Clients, Options } from './tasks-options';
import { TARGET } from './tasks-options';

export interface Level {
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

export async function throughput(
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
