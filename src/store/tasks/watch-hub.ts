/**
 * The watch hub's table (migration 0025; docs/decisions.md, "The watch hub"). A task workflow in hub mode
 * enlists its task (a row: what one poll needs, due now, no lease) and delists it when the task ends. A
 * worker's hub (src/temporal/watch-hub.ts) claims due rows no hub holds, in batches, and holds them while
 * its own lease is alive (`watch_hub_owners`, migration 0027: one row per hub, renewed in one small
 * statement however many tasks it holds); a dead worker's lease expires and another hub claims its rows. Polls
 * themselves write nothing here. `tasks.watch_due_at` (store/tasks/task-watch.ts) stays the staleness
 * mark: set while a row is enlisted but unclaimed, cleared when a hub claims it.
 */
import type { ExpressionBuilder, Kysely } from 'kysely';
import { sql } from 'kysely';
import { TERMINAL_TASK_STATUSES } from '../../protocol';
import { dialectOf } from '../dialect';
import type { Database } from '../schema';
import { watchDue } from './task-watch';

export interface WatchEnlistment {
  taskKey: string;
  workflowId: string;
  /** Project id and upstream alias: the hub's per-upstream share. */
  project: string;
  upstream: string;
  /** The enlisting run's token; the signal that answers this enlistment carries it back. */
  generation: string;
  /** What the poll needs (WatchUpstreamTaskInput), as JSON-able data. */
  watch: unknown;
  pollIntervalMs: number;
}

export interface ClaimedWatch extends WatchEnlistment {
  leaseUntil: string;
}

export interface HeldWatch {
  taskKey: string;
  generation: string;
}

export class WatchHubStore {
  private readonly lockRows: boolean;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.lockRows = dialectOf(db as Kysely<unknown>) === 'postgres';
  }

  /** Upserts the task's row, due now and held by no hub (a hub holding the earlier one drops it on renewal). */
  async enlist(e: WatchEnlistment): Promise<void> {
    const at = this.now().toISOString();
    const values = rowValues(e, at);
    // Due and not yet polled by anyone: the watch lag counts from here until a hub claims it. Marked
    // before the row is claimable: a claim in between (another worker's hub) clears the mark after it,
    // never before it (that left the mark on a polled task: stale in tasks/get, a lag that only grew).
    await watchDue(this.db, e.taskKey, at);
    await this.db
      .insertInto('watch_hub')
      .values({ task_key: e.taskKey, ...values })
      .onConflict((oc) => oc.column('task_key').doUpdateSet(values))
      .execute();
  }

  /**
   * The API's enlistment of a task it created (CREATED_ENLISTMENT, src/workflows/messages.ts), written in
   * the transaction that records the task (whose row that record marks due): claimable from `dueAt`, its
   * first poll. The workflow's own first enlistment replaces it.
   */
  static async enlistCreated(db: Kysely<Database>, e: WatchEnlistment, dueAt: string): Promise<void> {
    await db
      .insertInto('watch_hub')
      .values({ task_key: e.taskKey, ...rowValues(e, dueAt) })
      .execute();
  }

  async delist(taskKey: string): Promise<void> {
    await this.db.deleteFrom('watch_hub').where('task_key', '=', taskKey).execute();
  }

  /** Deletes the row if it is still the enlistment `generation` (a re-enlisted task keeps its new row). */
  async remove(taskKey: string, generation: string): Promise<void> {
    await this.db
      .deleteFrom('watch_hub')
      .where('task_key', '=', taskKey)
      .where('generation', '=', generation)
      .execute();
  }

  /**
   * Leases up to `limit` due rows that no hub holds (never leased, released, or whose holder's lease
   * expired) to `owner`, in one statement (PostgreSQL: rows another hub is claiming are skipped, not
   * waited for). The owner's own lease is renewed first, so what it claims is held from the start.
   * `orphans: false` looks only at unleased rows (from the lease-owner index), not at rows whose holder
   * died: finding those means looking at every held row (all 20,000 of one hub: about 11 ms on SQLite),
   * so a hub asks for them once in a while rather than at every round.
   */
  async claim(
    owner: string,
    leaseMs: number,
    limit: number,
    opts: { orphans?: boolean } = {},
  ): Promise<ClaimedWatch[]> {
    const now = this.now();
    const at = now.toISOString();
    const until = new Date(now.getTime() + leaseMs).toISOString();
    // Held: its owner's lease is alive, or (claimed by a hub that renews per row, an earlier version)
    // its own lease has not passed. Any other row is free.
    const orphaned = (eb: ExpressionBuilder<Database, 'watch_hub'>) =>
      eb.and([
        eb('lease_owner', 'is not', null),
        eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', at)]),
        eb.not(
          eb.exists(
            eb
              .selectFrom('watch_hub_owners as o')
              .select('o.owner')
              .whereRef('o.owner', '=', 'watch_hub.lease_owner')
              .where('o.alive_until', '>=', at),
          ),
        ),
      ]);
    const free = (eb: ExpressionBuilder<Database, 'watch_hub'>) =>
      opts.orphans === false
        ? eb('lease_owner', 'is', null)
        : eb.or([eb('lease_owner', 'is', null), orphaned(eb)]);
    const claimable = this.db
      .selectFrom('watch_hub')
      .select('task_key')
      .where(free)
      .where('due_at', '<=', at);
    // Every worker claims twice a second, and most rounds find nothing (always, with
    // `tasks.watchBy: activity`): a read says so without the write (on SQLite an UPDATE takes the
    // database's write lock even when it changes no row).
    if (!(await claimable.limit(1).executeTakeFirst())) return [];
    await this.keepAlive(owner, until);
    const due = claimable.orderBy('due_at').limit(limit);
    // PostgreSQL may run an `in (subquery)` again for each candidate row (a nested-loop semi join, as
    // over the lease-owner index), and each run skips the rows this statement has already leased, so the
    // claim took more than `limit` rows (4 for 2: a hub over its cap). As an array it runs once.
    const picked = (eb: ExpressionBuilder<Database, 'watch_hub'>) =>
      this.lockRows
        ? eb('task_key', '=', eb.fn.any(sql<string[]>`array(${due.forUpdate().skipLocked()})`))
        : eb('task_key', 'in', due);
    // lease_until as well: a hub of an earlier version leaves the row alone for that long.
    const rows = await this.db
      .updateTable('watch_hub')
      .set({ lease_owner: owner, lease_until: until })
      .where(picked)
      .where(free)
      .returningAll()
      .execute();
    // Polled from now on: no longer due (the staleness mark, store/tasks/task-watch.ts).
    await this.clearDue(rows.map((r) => r.task_key));
    return rows.map((r) => ({
      taskKey: r.task_key,
      workflowId: r.workflow_id,
      project: r.project,
      upstream: r.upstream,
      generation: r.generation,
      watch: JSON.parse(r.watch) as unknown,
      pollIntervalMs: r.poll_interval_ms,
      leaseUntil: until,
    }));
  }

  /**
   * Extends `owner`'s lease (one row, whatever it holds) and returns what it still holds: a row enlisted
   * again, or taken by another hub while this one's lease had run out, is no longer among them. Expired
   * leases of other hubs are deleted on the way once they hold no row: until then they say since when
   * those rows have gone unpolled (their rows are free either way).
   */
  async renew(owner: string, leaseMs: number): Promise<HeldWatch[]> {
    const now = this.now();
    await this.keepAlive(owner, new Date(now.getTime() + leaseMs).toISOString());
    await this.db
      .deleteFrom('watch_hub_owners')
      .where('alive_until', '<', now.toISOString())
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('watch_hub')
              .select('task_key')
              .whereRef('watch_hub.lease_owner', '=', 'watch_hub_owners.owner'),
          ),
        ),
      )
      .execute();
    const rows = await this.db
      .selectFrom('watch_hub')
      .select(['task_key', 'generation'])
      .where('lease_owner', '=', owner)
      .execute();
    return rows.map((r) => ({ taskKey: r.task_key, generation: r.generation }));
  }

  private async keepAlive(owner: string, until: string): Promise<void> {
    await this.db
      .insertInto('watch_hub_owners')
      .values({ owner, alive_until: until })
      .onConflict((oc) => oc.column('owner').doUpdateSet({ alive_until: until }))
      .execute();
  }

  /**
   * Marks running tasks due since `at` (the staleness mark): rows `owner` gives back, or holds while their
   * polls run late (the hub is behind), so tasks/get says how long their status has gone unchecked and the
   * watch lag counts them. Only rows `owner` still holds: one enlisted again or taken over meanwhile (a
   * hub marks thousands, batch after batch) is another holder's to mark or clear, and a mark it never
   * clears would read as stale while that holder polls. In batches (a hub may hold thousands).
   */
  async markDue(taskKeys: string[], at: string, owner: string): Promise<void> {
    for (let i = 0; i < taskKeys.length; i += 500) {
      await this.db
        .updateTable('tasks')
        .set({ watch_due_at: at })
        .where('task_key', 'in', taskKeys.slice(i, i + 500))
        .where('status', 'not in', [...TERMINAL_TASK_STATUSES])
        .where((eb) => heldRow(eb, owner))
        .execute();
    }
  }

  /**
   * Marks a task due since `at` when its hub hands the workflow a change the workflow has yet to record:
   * until it has, tasks/get would vouch for the recorded status. Only while the row is still that
   * enlistment and held by `owner` (a row enlisted again, or taken over, is being polled by its holder),
   * and an earlier mark stands (a retried delivery does not move it later).
   */
  async markAnswered(taskKey: string, generation: string, owner: string, at: string): Promise<void> {
    await this.db
      .updateTable('tasks')
      .set({ watch_due_at: sql<string>`coalesce(watch_due_at, ${at})` })
      .where('task_key', '=', taskKey)
      .where('status', 'not in', [...TERMINAL_TASK_STATUSES])
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('watch_hub')
            .select('watch_hub.task_key')
            .where('watch_hub.task_key', '=', taskKey)
            .where('watch_hub.generation', '=', generation)
            .where('watch_hub.lease_owner', '=', owner),
        ),
      )
      .execute();
  }

  /**
   * Tasks polled again (claimed, or caught up after their polls ran late): no longer marked due. Only
   * while a hub holds the task's row: a row enlisted again in the meantime is held by none and keeps the
   * mark its enlistment set until a hub claims it (cleared by that claim), rather than read as polled.
   */
  async clearDue(taskKeys: string[]): Promise<void> {
    for (let i = 0; i < taskKeys.length; i += 500) {
      await this.db
        .updateTable('tasks')
        .set({ watch_due_at: null })
        .where('task_key', 'in', taskKeys.slice(i, i + 500))
        .where('watch_due_at', 'is not', null)
        .where((eb) => heldRow(eb))
        .execute();
    }
  }

  /** Gives back rows (all of `owner`'s, or those listed): due now, for any hub to claim. */
  async release(owner: string, taskKeys?: string[]): Promise<number> {
    if (taskKeys?.length === 0) return 0;
    const at = this.now().toISOString();
    const held = (eb: ExpressionBuilder<Database, 'watch_hub'>) =>
      taskKeys
        ? eb.and([eb('lease_owner', '=', owner), eb('task_key', 'in', taskKeys)])
        : eb('lease_owner', '=', owner);
    // Due again, unpolled until claimed: the staleness mark (a hub may hold thousands), made before the
    // rows are claimable, as enlist does, so that a claim's clearing always comes after it.
    const marked = (await this.db.selectFrom('watch_hub').select('task_key').where(held).execute()).map(
      (r) => r.task_key,
    );
    await this.markDue(marked, at, owner);
    const keys = (
      await this.db
        .updateTable('watch_hub')
        .set({ lease_owner: null, lease_until: null, due_at: at })
        .where(held)
        .returning('task_key')
        .execute()
    ).map((r) => r.task_key);
    // Marked but not given back (taken over meanwhile as a dead hub's): the taker polls them.
    const released = new Set(keys);
    await this.clearDue(marked.filter((k) => !released.has(k)));
    return keys.length;
  }
}

/** Whether the task's watch hub row is leased: to `owner`, or to any hub. */
function heldRow(eb: ExpressionBuilder<Database, 'tasks'>, owner?: string) {
  const row = eb
    .selectFrom('watch_hub')
    .select('watch_hub.task_key')
    .whereRef('watch_hub.task_key', '=', 'tasks.task_key');
  return eb.exists(
    owner === undefined
      ? row.where('watch_hub.lease_owner', 'is not', null)
      : row.where('watch_hub.lease_owner', '=', owner),
  );
}

/** A row's columns for an enlistment due at `dueAt`, held by no hub. */
function rowValues(e: WatchEnlistment, dueAt: string) {
  return {
    workflow_id: e.workflowId,
    project: e.project,
    upstream: e.upstream,
    generation: e.generation,
    watch: JSON.stringify(e.watch),
    poll_interval_ms: e.pollIntervalMs,
    due_at: dueAt,
    lease_owner: null,
    lease_until: null,
  };
}
