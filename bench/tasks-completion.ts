/**
 * bench:tasks, parts 2 and 3 (see bench/tasks.ts): how soon a client sees a task's completion, by polling
 * `tasks/get` and pushed on `subscriptions/listen` streams, measured from the upstream's own completion
 * time.
 */
import { note } from './env';
import type { ListenStream, McpHttpClient, RpcReply } from './support';
import { mapLimit, round, sleep, summarize } from './support';
import type { Created } from './task-support';
import { createTask, effectivePollMs, many } from './task-support';
import type { Clients, Options } from './tasks-options';

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

export async function completionByPolling(clients: Clients, opts: Options) {
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

export async function completionByPush(clients: Clients, opts: Options) {
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
