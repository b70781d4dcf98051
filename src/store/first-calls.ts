/**
 * Who got to a task's first upstream call first (migrations/0010-first-calls.ts): the worker about to
 * send it (`sending`), or the API that gave up waiting for the task to start (`abandoned`). A claim is
 * one insert that either wins or reports what was there; the loser acts on that. Rows older than any
 * start deadline are removed by the payload retention (they say nothing once the task started).
 */
import type { Kysely } from 'kysely';
import type { Database } from './schema';

export type FirstCallState = 'sending' | 'abandoned';

export class FirstCalls {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Claims the task's first call for `state`. `won`: this claim was first; otherwise `state` is the
   * earlier claim (an abandonment, or a send that may already have happened).
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

  /** Removes claims older than `before` (ISO time). */
  async purge(before: string): Promise<number> {
    const result = await this.db.deleteFrom('first_calls').where('at', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
