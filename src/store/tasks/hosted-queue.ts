/**
 * The queue of hosted calls to an upstream whose hosting policy sets `maxConcurrent` (issue 24,
 * docs/hosted-tasks.md, migration 0021): a call takes one of the upstream's slots or waits, in arrival
 * order, and gives the slot back when it ends. In the database, so the queue survives restarts of every
 * process. Slots are counted under a lock on the upstream's row (PostgreSQL; SQLite serializes writers),
 * so two workers never both take the last one. A slot held by a task that ended without giving it back
 * (its workflow terminated) is freed by the next look at the queue.
 */
import type { Kysely } from 'kysely';
import { TERMINAL_TASK_STATUSES } from '../../protocol';
import { dialectOf } from '../dialect';
import type { Database } from '../schema';

export type SlotAnswer = { running: true } | { running: false; position: number };

export interface QueueLength {
  project: string;
  upstream: string;
  waiting: number;
}

export class HostedQueue {
  private readonly lockRows: boolean;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.lockRows = dialectOf(db as Kysely<unknown>) === 'postgres';
  }

  /**
   * Takes a slot for the task if one is free for it: fewer running than `max` counting the calls that
   * arrived before it (they take theirs first); else says where it stands (1 = next).
   */
  async acquire(taskKey: string, upstreamId: string, max: number): Promise<SlotAnswer> {
    return this.db.transaction().execute(async (trx) => {
      if (this.lockRows) {
        await trx.selectFrom('upstreams').select('id').where('id', '=', upstreamId).forUpdate().execute();
      }
      await trx
        .insertInto('hosted_queue')
        .values({
          task_key: taskKey,
          upstream_id: upstreamId,
          enqueued_at: this.now().toISOString(),
          state: 'waiting',
        })
        .onConflict((oc) => oc.column('task_key').doNothing())
        .execute();
      // Slots of tasks that ended (or are gone) without giving theirs back.
      await trx
        .deleteFrom('hosted_queue')
        .where('upstream_id', '=', upstreamId)
        .where('task_key', '!=', taskKey)
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('tasks')
                .select('tasks.task_key')
                .whereRef('tasks.task_key', '=', 'hosted_queue.task_key')
                .where('tasks.status', 'not in', [...TERMINAL_TASK_STATUSES]),
            ),
          ),
        )
        .execute();
      const mine = await trx
        .selectFrom('hosted_queue')
        .select(['state', 'enqueued_at'])
        .where('task_key', '=', taskKey)
        .executeTakeFirstOrThrow();
      if (mine.state === 'running') return { running: true };
      const counts = await trx
        .selectFrom('hosted_queue')
        .select((eb) => [
          eb.fn.countAll<number | string>().filterWhere('state', '=', 'running').as('running'),
          eb.fn
            .countAll<number | string>()
            .filterWhere((w) =>
              w.and([
                w('state', '=', 'waiting'),
                w.or([
                  w('enqueued_at', '<', mine.enqueued_at),
                  w.and([w('enqueued_at', '=', mine.enqueued_at), w('task_key', '<', taskKey)]),
                ]),
              ]),
            )
            .as('ahead'),
        ])
        .where('upstream_id', '=', upstreamId)
        .executeTakeFirstOrThrow();
      const running = Number(counts.running);
      const ahead = Number(counts.ahead);
      if (running + ahead >= max) return { running: false, position: ahead + 1 };
      await trx
        .updateTable('hosted_queue')
        .set({ state: 'running' })
        .where('task_key', '=', taskKey)
        .execute();
      return { running: true };
    });
  }

  /** The task's slot (or place in the queue) is given back. */
  async release(taskKey: string): Promise<void> {
    await this.db.deleteFrom('hosted_queue').where('task_key', '=', taskKey).execute();
  }

  /** Calls waiting per project upstream (for `/metrics`): names, never ids. */
  async lengths(): Promise<QueueLength[]> {
    const rows = await this.db
      .selectFrom('hosted_queue')
      .innerJoin('upstreams', 'upstreams.id', 'hosted_queue.upstream_id')
      .innerJoin('projects', 'projects.id', 'upstreams.project_id')
      .select((eb) => [
        'projects.slug as project',
        'upstreams.alias as upstream',
        eb.fn.countAll<number | string>().as('waiting'),
      ])
      .where('hosted_queue.state', '=', 'waiting')
      .groupBy(['projects.slug', 'upstreams.alias'])
      .execute();
    return rows.map((r) => ({ project: r.project, upstream: r.upstream, waiting: Number(r.waiting) }));
  }
}
