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

/** Who holds a task's watch hub row: its lease owner, that owner's lease row, and the row's own lease. */
export interface HubHold {
  owner: string | null;
  ownerAliveUntil: string | null;
  leaseUntil: string | null;
}

/**
 * When a running task's polls stopped for certain, if no mark says so: its watch hub row is held by a hub
 * that is not alive, by the rule a claim frees such a row (store/tasks/watch-hub.ts): its owner's lease
 * row ran out or is gone, and the row's own lease (a hub of an earlier version renewed that one) passed
 * too. Since the last moment it was held: the owner's lease end, or the row's own if the owner's row is
 * gone (a hub's renewal before this rule deleted dead leases at once). A killed worker cannot mark what
 * it held, and with no other worker alive nobody takes its rows over; without this its tasks would read
 * as checked for as long as it stays down. (Its polls may have stopped up to a lease earlier: the mark
 * errs on the late side.)
 */
export function deadHubSince(hold: HubHold, now: Date): string | undefined {
  if (hold.owner == null) return undefined;
  const at = now.toISOString();
  if (hold.ownerAliveUntil != null && hold.ownerAliveUntil >= at) return undefined;
  if (hold.leaseUntil == null || hold.leaseUntil >= at) return undefined;
  // A claim leases the row until its owner's lease at that time; renewals extend only the owner's.
  return hold.ownerAliveUntil ?? hold.leaseUntil;
}

/**
 * Per project and upstream, the oldest time since which a running task has gone unpolled: marked due
 * (unclaimed, given back, or polled late), or held by a hub whose lease ran out (`deadHubSince`).
 */
export async function overdueWatches(db: Kysely<Database>, now: Date): Promise<OverdueWatch[]> {
  const terminal = [...TERMINAL_TASK_STATUSES];
  const marked = await db
    .selectFrom('tasks')
    .select(['project', 'upstream', (eb) => eb.fn.min<string>('watch_due_at').as('dueSince')])
    .where('watch_due_at', 'is not', null)
    .where('status', 'not in', terminal)
    .groupBy(['project', 'upstream'])
    .execute();
  const at = now.toISOString();
  // deadHubSince's rule, per upstream.
  const orphaned = await db
    .selectFrom('watch_hub as h')
    .leftJoin('watch_hub_owners as o', 'o.owner', 'h.lease_owner')
    .innerJoin('tasks as t', 't.task_key', 'h.task_key')
    .select([
      'h.project',
      'h.upstream',
      (eb) => eb.fn.min<string>(eb.fn.coalesce('o.alive_until', 'h.lease_until')).as('dueSince'),
    ])
    .where('h.lease_owner', 'is not', null)
    .where((eb) => eb.or([eb('o.alive_until', 'is', null), eb('o.alive_until', '<', at)]))
    .where('h.lease_until', '<', at)
    .where('t.status', 'not in', terminal)
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
