/**
 * The status changes of every task, in the order they become readable, for the listen streams' pushes
 * (src/api/mcp/subscriptions.ts): history rows read after a cursor, `id > cursor`.
 *
 * A cursor alone loses rows on PostgreSQL: an identity value is taken when a row is inserted, not when
 * its transaction commits, so a row can become readable after one with a higher id was read and the
 * cursor moved past it (two workers recording two tasks' ends at once). The feed therefore remembers the
 * ids it passed over (gaps) and reads them again on later rounds until they appear or GAP_WINDOW_MS has
 * gone by (a rolled-back insert leaves a gap for good). On SQLite writers are serialized, so ids become
 * readable in order and only a rollback leaves a gap. When the feed starts, the ids missing just below
 * the newest row are gaps too: transactions that took them may not have committed yet.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../schema';

/** How long a missing id is looked for: far longer than the insert-to-commit of a history row. */
export const GAP_WINDOW_MS = 10_000;
/** Missing ids remembered at most (a jump of the sequence is not a million transactions in flight). */
const MAX_GAPS = 1_000;
/** How far below the newest row a starting feed looks for missing ids. */
const START_LOOKBACK = 64;

export interface StatusEvent {
  id: number;
  taskKey: string;
}

export class StatusEventFeed {
  private after = 0;
  /** The last read stopped at its limit: more rows are waiting. */
  behind = false;
  private started: Promise<void> | undefined;
  /** Ids passed over, with when they were first missed. */
  private readonly gaps = new Map<number, number>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Starts reading at the newest row (once; later calls wait for the first). */
  start(): Promise<void> {
    this.started ??= this.begin().catch((err: unknown) => {
      this.started = undefined;
      throw err;
    });
    return this.started;
  }

  private async begin(): Promise<void> {
    const newest = await this.db
      .selectFrom('task_events')
      .select((eb) => eb.fn.max('id').as('id'))
      .executeTakeFirst();
    const top = Number(newest?.id ?? 0);
    const present = await this.db
      .selectFrom('task_events')
      .select('id')
      .where('id', '>', Math.max(0, top - START_LOOKBACK))
      .where('id', '<=', top)
      .execute();
    const seen = new Set(present.map((r) => Number(r.id)));
    this.after = top;
    const at = this.now();
    for (let id = Math.max(1, top - START_LOOKBACK + 1); id < top; id++)
      if (!seen.has(id)) this.gaps.set(id, at);
  }

  /**
   * Status rows that became readable since the last read (at most about `limit`), oldest first. Both
   * queries are made before anything is updated: a read that fails loses nothing and is read again.
   */
  async read(limit = 500): Promise<StatusEvent[]> {
    this.behind = false;
    await this.start();
    const at = this.now();
    const late =
      this.gaps.size === 0
        ? []
        : await this.db
            .selectFrom('task_events')
            .select(['id', 'task_key', 'kind'])
            .where('id', 'in', [...this.gaps.keys()])
            .orderBy('id')
            .execute();
    const rows = await this.db
      .selectFrom('task_events')
      .select(['id', 'task_key', 'kind'])
      .where('id', '>', this.after)
      .orderBy('id')
      .limit(limit)
      .execute();
    const out: StatusEvent[] = [];
    for (const row of late) {
      this.gaps.delete(Number(row.id));
      if (row.kind === 'status') out.push({ id: Number(row.id), taskKey: row.task_key });
    }
    for (const [id, missedAt] of this.gaps) if (at - missedAt > GAP_WINDOW_MS) this.gaps.delete(id);
    for (const row of rows) {
      const id = Number(row.id);
      // The ids just below a row are the likeliest still to commit: past MAX_GAPS the oldest go.
      for (let gap = Math.max(this.after + 1, id - MAX_GAPS); gap < id; gap++) this.gaps.set(gap, at);
      for (const oldest of this.gaps.keys()) {
        if (this.gaps.size <= MAX_GAPS) break;
        this.gaps.delete(oldest);
      }
      this.after = id;
      if (row.kind === 'status') out.push({ id, taskKey: row.task_key });
    }
    this.behind = rows.length === limit;
    return out;
  }

  /** Ids being looked for (for tests and the curious). */
  missing(): number[] {
    return [...this.gaps.keys()];
  }
}
