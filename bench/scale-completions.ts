/**
 * bench:scale's completion side: how many tasks are in flight over a run, and completions followed on
 * `subscriptions/listen` streams (25 task ids a stream, opened as the tasks are created) with the lag of
 * each push behind the upstream's own completion.
 */
import type { ListenStream, McpHttpClient } from './support';
import { sleep } from './support';
import type { Created } from './task-support';

/** Task ids per listen stream. */
export const PER_STREAM = 25;

/** Peak of "created and not yet due" over the run, from each task's creation time and duration. */
export function peakInFlight(created: ReadonlyArray<{ createdAtMs: number; seconds: number }>) {
  const events: Array<[number, number]> = [];
  for (const c of created) events.push([c.createdAtMs, 1], [c.createdAtMs + c.seconds * 1000, -1]);
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let peak = 0;
  for (const [, d] of events) peak = Math.max(peak, (now += d));
  return peak;
}

/** Follows completions of tasks on listen streams, 25 ids a stream, opened as the tasks are created. */
export class CompletionWatch {
  readonly lags = new Map<string, number>();
  readonly failures: string[] = [];
  private readonly followed = new Map<string, number>();
  private readonly due = new Map<string, number>();
  private readonly streams: Array<Promise<ListenStream | undefined>> = [];
  /** Which stream (index in `streams`) follows each task. */
  private readonly streamOf = new Map<string, number>();
  private pending: string[] = [];
  /** Tasks whose completion came before their stream was acknowledged. */
  private readonly early = new Set<string>();
  private closing = false;
  private endedEarly = 0;

  /** `client` is the tasks' owner: a stream follows only the caller's own tasks. */
  constructor(private readonly client: McpHttpClient) {}

  add(task: Created, dueAtMs: number): void {
    this.due.set(task.taskId, dueAtMs);
    this.pending.push(task.taskId);
    if (this.pending.length >= PER_STREAM) this.flush();
  }

  flush(): void {
    if (this.pending.length === 0) return;
    const ids = this.pending;
    this.pending = [];
    for (const id of ids) this.streamOf.set(id, this.streams.length);
    this.streams.push(
      this.client
        .listen({ taskIds: ids }, (m, at) => this.onMessage(m, at))
        .then(
          (stream) => {
            const ackAt = Date.now();
            // A stream the gateway ends before the bench closes it loses the pushes still due on it.
            void stream.ended.then(() => {
              if (!this.closing) this.endedEarly++;
            });
            for (const id of (stream.acknowledged.taskIds ?? []) as string[]) this.followed.set(id, ackAt);
            return stream;
          },
          (err: unknown) => {
            this.failures.push(`listen: ${err instanceof Error ? err.message : String(err)}`);
            return undefined;
          },
        ),
    );
  }

  private onMessage(m: Record<string, unknown>, receivedAt: number): void {
    if (m.method !== 'notifications/tasks') return;
    const p = m.params as { taskId?: string; status?: string; lastUpdatedAt?: string };
    if (p.status !== 'completed' || !p.taskId || this.lags.has(p.taskId)) return;
    const done = Date.parse(String(p.lastUpdatedAt));
    if (done < (this.followed.get(p.taskId) ?? Infinity)) this.early.add(p.taskId);
    else this.lags.set(p.taskId, receivedAt - done);
  }

  /** Waits until every followed task was pushed, or `graceMs` after the last one was due. */
  async finish(graceMs: number): Promise<void> {
    this.flush();
    const streams = await Promise.all(this.streams);
    const lastDue = Math.max(0, ...this.due.values());
    while (this.lags.size + this.early.size < this.followed.size && Date.now() < lastDue + graceMs)
      await sleep(100);
    this.closing = true;
    await Promise.all(streams.map((s) => s?.close()));
    if (this.endedEarly > 0)
      this.failures.push(`${this.endedEarly} listen streams ended before the bench closed them`);
    if (this.followed.size < this.due.size) {
      this.failures.push(`${this.due.size - this.followed.size} task ids were not honoured by a listen`);
    }
    if (this.early.size > 0)
      this.failures.push(`${this.early.size} tasks completed before their stream was acknowledged`);
    const missing = [...this.followed.keys()].filter((id) => !this.lags.has(id) && !this.early.has(id));
    if (missing.length > 0) {
      // What the gateway says of them now, and on how many streams they were: a poll that ran late
      // (still working) or a push that was lost (completed), one stream's trouble or everyone's.
      const statuses = new Map<string, number>();
      for (const id of missing) {
        const reply = await this.client.getTask(id);
        const status = String(reply.result?.status ?? `error ${reply.error?.code ?? reply.status}`);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
      const said = [...statuses].map(([status, n]) => `${status} ${n}`).join(', ');
      const onStreams = new Set(missing.map((id) => this.streamOf.get(id))).size;
      const before = missing.map((id) => Math.round((lastDue - (this.due.get(id) ?? lastDue)) / 1000));
      this.failures.push(
        `${missing.length} completions were never pushed (tasks/get now: ${said}; ` +
          `followed on ${onStreams} of ${streams.length} streams; due ${Math.min(...before)}-` +
          `${Math.max(...before)} s before the last followed task)`,
      );
    }
  }
}
