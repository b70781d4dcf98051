/**
 * bench:tasks, part 1 (see bench/tasks.ts): the latency of a task creation against an ordinary call of
 * the same tool, of `tasks/get` of a working task against a completed one, each with the CPU the gateway
 * and Temporal used per call, and where a creation's time goes in the task workflow's history.
 */
import type { Client } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import { taskKeyOf } from '../src/store/tasks/task-store';
import { taskWorkflowId } from '../src/workflows/messages';
import { note } from './env';
import { cpuMs } from './processes';
import { abba, percentile, ratio, replyProblem, round, sleep, summarize } from './support';
import { createTask } from './task-support';
import type { Clients, Options, Pids } from './tasks-options';
import { TARGET } from './tasks-options';

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

export async function creationLatency(clients: Clients, opts: Options, pids: Pids) {
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

export interface TimedCreation {
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
export async function creationTimeline(client: Client, timed: readonly TimedCreation[], count: number) {
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
export async function tasksGetLatency(clients: Clients, opts: Options, pids: Pids) {
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
