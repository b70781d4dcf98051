/**
 * Which running tasks no watch activity is polling, and since when (`tasks.watch_due_at`, migration
 * 0017). A task's next poll is due when a watch ends and the workflow is to start the next one (or when
 * the task is recorded, before its first watch); the mark is cleared when a watch starts or the task
 * ends. Normally the next watch starts within milliseconds; on a worker whose activity slots are all
 * taken it waits in Temporal's queue, unpolled, and the mark ages. That age is the watch lag
 * (`taskrouter_watch_lag_seconds`, docs/operators.md) and what tasks/get says about a status it cannot
 * vouch for (docs/gateway.md, "`_meta`"). A watch that ends on a change marks the task due in the write
 * that records the change (TaskStore.recordSnapshot); one that ends unchanged (every `tasks.maxWatchMs`)
 * writes the mark itself, and each watch start clears it: at most two writes per watch, none per poll.
 */
import type { Kysely } from 'kysely';
import { TERMINAL_TASK_STATUSES } from '../../protocol';
import type { Database } from '../schema';

export interface OverdueWatch {
  project: string;
  upstream: string;
  /** The oldest `watch_due_at` among the running tasks of this project and upstream (ISO 8601). */
  dueSince: string;
}

/**
 * How late a running task's poll may be before its status is called unchecked: two poll intervals, at
 * least 2 s (an upstream that names no interval: 1 s). tasks/get marks such a status, and a watch hub
 * that late is behind.
 */
export function staleAfterMs(pollIntervalMs: number | undefined): number {
  return Math.max(2 * (pollIntervalMs ?? 1000), 2000);
}

export async function watchStarted(db: Kysely<Database>, taskKey: string): Promise<void> {
  await db
    .updateTable('tasks')
    .set({ watch_due_at: null })
    .where('task_key', '=', taskKey)
    .where('watch_due_at', 'is not', null)
    .execute();
}

export async function watchDue(db: Kysely<Database>, taskKey: string, at: string): Promise<void> {
  await db
    .updateTable('tasks')
    .set({ watch_due_at: at })
    .where('task_key', '=', taskKey)
    .where('status', 'not in', [...TERMINAL_TASK_STATUSES])
    .execute();
}

/**
 * When a running task's polls stopped for certain, if no mark says so: its watch hub row is held by a hub
 * whose lease ran out (`aliveUntil`, passed). A killed worker cannot mark what it held, and with no other
 * worker alive nobody takes its rows over; without this its tasks would read as checked for as long as
 * it stays down. (Its polls may have stopped up to a lease earlier: the mark errs on the late side.)
 */
export function deadHubSince(aliveUntil: string | null | undefined, now: Date): string | undefined {
  return aliveUntil != null && aliveUntil < now.toISOString() ? aliveUntil : undefined;
}

/**
 * Per project and upstream, the oldest time since which a running task has gone unpolled: marked due
 * (unclaimed, given back, or polled late), or held by a hub whose lease ran out (`deadHubSince`).
 */
export async function overdueWatches(db: Kysely<Database>, now: Date): Promise<OverdueWatch[]> {
  const running = [...TERMINAL_TASK_STATUSES];
  const marked = await db
    .selectFrom('tasks')
    .select(['project', 'upstream', (eb) => eb.fn.min<string>('watch_due_at').as('dueSince')])
    .where('watch_due_at', 'is not', null)
    .where('status', 'not in', running)
    .groupBy(['project', 'upstream'])
    .execute();
  const orphaned = await db
    .selectFrom('watch_hub_owners as o')
    .innerJoin('watch_hub as h', 'h.lease_owner', 'o.owner')
    .innerJoin('tasks as t', 't.task_key', 'h.task_key')
    .select(['h.project', 'h.upstream', (eb) => eb.fn.min<string>('o.alive_until').as('dueSince')])
    .where('o.alive_until', '<', now.toISOString())
    .where('t.status', 'not in', running)
    .groupBy(['h.project', 'h.upstream'])
    .execute();
  const oldest = new Map<string, OverdueWatch>();
  for (const r of [...marked, ...orphaned]) {
    if (typeof r.dueSince !== 'string') continue;
    const key = `${r.project}\u0000${r.upstream}`;
    const seen = oldest.get(key);
    if (!seen || r.dueSince < seen.dueSince) oldest.set(key, { ...r, dueSince: r.dueSince });
  }
  return [...oldest.values()];
}
