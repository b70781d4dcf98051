/**
 * Who got to a task's first upstream call first, and how it ended (migrations/0010-first-calls.ts,
 * 0019-first-call-states.ts). A claim is one insert that either wins or reports what was there; the
 * loser acts on that. States:
 *
 * - `sending`: claimed by whoever sends the call (the API, or the worker's first-call activity), before
 *   sending it, until its outcome is known; the call may have reached the upstream.
 * - `abandoned`: the API gave up waiting for a worker to start the task (worker path): nothing is sent.
 * - `done`: the upstream's synchronous answer (or the failure) is known: the API relayed it to the
 *   client, or the worker's first-call activity recorded it; or the reconciler found a worker-path claim
 *   still `sending` whose answer was recorded.
 * - `recorded`: the upstream answered with a task; the task row (and its workflow's start input) was
 *   recorded in the same transaction as this state. The workflow may not be started yet.
 * - `started`: the task's workflow was started (by the API, or by the creation reconciler); on the
 *   worker path, the task its workflow's first call created was recorded.
 * - `lost`: `sending` for too long with no recorded answer: whoever sent it died with the answer. The
 *   call is never sent again, whatever the tool.
 *
 * Rows older than the payload retention are removed with the payloads.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../schema';

export type FirstCallState = 'sending' | 'abandoned' | 'done' | 'recorded' | 'started' | 'lost';

/** The longest a claim in flight goes without being kept fresh (see whileSending). */
const FRESH_EVERY_MS = 60_000;

export class FirstCalls {
  /**
   * `lostAfterMs`: after how long the creation reconciler declares a claim `sending` lost
   * (`tasks.firstCallLostAfterMs`); a claim whose call is still in flight is kept fresher than that.
   */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date = () => new Date(),
    private readonly lostAfterMs = 900_000,
  ) {}

  /**
   * Runs `send` (the claim's call) with its `sending` claim kept fresh while it runs (its time moved to
   * now, every third of `lostAfterMs` and at least once a minute): an upstream may take longer than that
   * to answer (each progress notification restarts the call's deadline), and the reconciler must not
   * declare lost a call whose sender is alive and still waiting. Only a dead sender stops refreshing.
   */
  async whileSending<T>(taskKey: string, send: () => Promise<T>): Promise<T> {
    const every = Math.max(100, Math.min(FRESH_EVERY_MS, Math.floor(this.lostAfterMs / 3)));
    const timer = setInterval(() => {
      void this.db
        .updateTable('first_calls')
        .set({ at: this.now().toISOString() })
        .where('task_key', '=', taskKey)
        .where('state', '=', 'sending')
        .execute()
        .catch(() => undefined); // the next refresh tries again; lostAfterMs is three of them
    }, every);
    timer.unref();
    try {
      return await send();
    } finally {
      clearInterval(timer);
    }
  }

  /**
   * Claims the task's first call for `state`. `won`: this claim was first; otherwise `state` is the
   * earlier claim (an abandonment, or a send that may already have happened, and what became of it).
   */
  async claim(taskKey: string, state: FirstCallState): Promise<{ won: boolean; state: FirstCallState }> {
    const inserted = await this.db
      .insertInto('first_calls')
      .values({ task_key: taskKey, state, at: this.now().toISOString() })
      .onConflict((oc) => oc.column('task_key').doNothing())
      .returning('state')
      .executeTakeFirst();
    if (inserted) return { won: true, state };
    const row = await this.db
      .selectFrom('first_calls')
      .select('state')
      .where('task_key', '=', taskKey)
      .executeTakeFirst();
    return { won: false, state: (row?.state as FirstCallState | undefined) ?? state };
  }

  /**
   * Moves a claim from `from` to `to` (its time becomes now); `db` is a transaction when the move
   * belongs with other writes. False when the claim was not in `from` (someone else moved it).
   */
  async move(
    taskKey: string,
    from: FirstCallState,
    to: FirstCallState,
    db: Kysely<Database> = this.db,
  ): Promise<boolean> {
    const result = await db
      .updateTable('first_calls')
      .set({ state: to, at: this.now().toISOString() })
      .where('task_key', '=', taskKey)
      .where('state', '=', from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * Runs `write` and moves the claim from `sending` to `recorded` in one transaction: the task and its
   * claim's new state exist together or not at all. Throws (nothing written) when the claim was not
   * `sending` any more (the reconciler declared it lost meanwhile).
   */
  async record(taskKey: string, write: (trx: Kysely<Database>) => Promise<void>): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await write(trx);
      if (!(await this.move(taskKey, 'sending', 'recorded', trx))) {
        throw new Error('The first call was no longer claimed as sending; the task was not recorded');
      }
    });
  }

  /** Task keys of claims in `state` since before `before` (ISO time), oldest first. */
  async inStateSince(state: FirstCallState, before: string, limit: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom('first_calls')
      .select('task_key')
      .where('state', '=', state)
      .where('at', '<', before)
      .orderBy('at')
      .limit(limit)
      .execute();
    return rows.map((r) => r.task_key);
  }

  /** The claim's state, if there is one. */
  async stateOf(taskKey: string): Promise<FirstCallState | undefined> {
    const row = await this.db
      .selectFrom('first_calls')
      .select('state')
      .where('task_key', '=', taskKey)
      .executeTakeFirst();
    return row?.state as FirstCallState | undefined;
  }

  /** Removes claims older than `before` (ISO time). */
  async purge(before: string): Promise<number> {
    const result = await this.db.deleteFrom('first_calls').where('at', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
