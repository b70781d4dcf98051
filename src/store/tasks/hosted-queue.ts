/**
 * The queue of hosted calls to an upstream whose hosting policy sets `maxConcurrent` (issue 24,
 * docs/hosted-tasks.md, migration 0021): a call takes one of the upstream's slots or waits, in arrival
 * order, and gives the slot back when it ends. In the database, so the queue survives restarts of every
 * process. Slots are counted under a lock on the upstream's row (PostgreSQL; SQLite serializes writers),
 * so two workers never both take the last one. A slot held by a task that ended without giving it back
 * is freed by the next look at the queue; a slot or place whose workflow was closed (terminated) by a
 * call stuck behind it (activities/hosted-slot.ts, takeHostedSlot). A call whose upstream asks the client
 * for input gives its slot up while it waits for the answer (`asking`) and keeps its place: once answered
 * it runs before every call that came after it.
 */
import type { Kysely } from 'kysely';
import { TERMINAL_TASK_STATUSES } from '../../protocol';
import { dialectOf } from '../dialect';
import type { Database, HostedQueueTable } from '../schema';

export type SlotAnswer = { running: true } | { running: false; position: number };

/** Waiting calls woken when a slot is given back, beyond the slots now free: their places moved up. */
const WAKE_BEYOND_FREE = 5;

/** A call in an upstream's queue and its task's workflow. */
export interface QueuedCall {
  taskKey: string;
  workflowId: string;
}

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
      const at = this.now().toISOString();
      // In line from its first look (its place is that time), and seen alive at each (see suspects).
      await trx
        .insertInto('hosted_queue')
        .values({
          task_key: taskKey,
          upstream_id: upstreamId,
          enqueued_at: at,
          state: 'waiting',
          looked_at: at,
        })
        .onConflict((oc) => oc.column('task_key').doUpdateSet({ looked_at: at }))
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
      if (mine.state === 'asking') {
        // Answered: back in line at its own arrival time, so ahead of every call that came after it.
        await trx
          .updateTable('hosted_queue')
          .set({ state: 'waiting' })
          .where('task_key', '=', taskKey)
          .execute();
      }
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

  /**
   * Gives the task's slot back, or only lends it while the upstream waits for the client's answer
   * (`keepPlace`: once answered, it runs before the calls that came after it), and says which waiting
   * calls to wake: the workflow ids of the first in line, as many as slots are free now and a few more
   * (their places moved up).
   */
  async giveBack(taskKey: string, upstreamId: string, max: number, keepPlace = false): Promise<string[]> {
    return this.db.transaction().execute(async (trx) => {
      if (this.lockRows) {
        await trx.selectFrom('upstreams').select('id').where('id', '=', upstreamId).forUpdate().execute();
      }
      if (keepPlace) {
        await trx
          .updateTable('hosted_queue')
          .set({ state: 'asking' })
          .where('task_key', '=', taskKey)
          .execute();
      } else await trx.deleteFrom('hosted_queue').where('task_key', '=', taskKey).execute();
      const { running } = await trx
        .selectFrom('hosted_queue')
        .select((eb) => eb.fn.countAll<number | string>().as('running'))
        .where('upstream_id', '=', upstreamId)
        .where('state', '=', 'running')
        .executeTakeFirstOrThrow();
      const free = Math.max(0, max - Number(running));
      const next = await trx
        .selectFrom('hosted_queue')
        .innerJoin('tasks', 'tasks.task_key', 'hosted_queue.task_key')
        .select('tasks.workflow_id')
        .where('hosted_queue.upstream_id', '=', upstreamId)
        .where('hosted_queue.state', '=', 'waiting')
        .orderBy('hosted_queue.enqueued_at')
        .orderBy('hosted_queue.task_key')
        .limit(free + WAKE_BEYOND_FREE)
        .execute();
      return next.map((row) => row.workflow_id);
    });
  }

  /**
   * Waiting calls that have not looked at the queue since `before` (a waiting call looks at least once a
   * minute), first in line first: perhaps closed without giving their place back, each worth asking
   * Temporal about. Only those, not every call ahead of a stuck one.
   */
  async suspects(upstreamId: string, before: string, limit: number): Promise<QueuedCall[]> {
    return this.calls(upstreamId, 'waiting')
      .where((eb) =>
        eb.or([eb('hosted_queue.looked_at', 'is', null), eb('hosted_queue.looked_at', '<', before)]),
      )
      .orderBy('hosted_queue.enqueued_at')
      .limit(limit)
      .execute();
  }

  /** The calls holding the upstream's slots, with their workflows (to find one closed without giving it back). */
  async holders(upstreamId: string): Promise<QueuedCall[]> {
    return this.calls(upstreamId, 'running').execute();
  }

  /** The upstream's calls in `state`, with their tasks' workflows. */
  private calls(upstreamId: string, state: HostedQueueTable['state']) {
    return this.db
      .selectFrom('hosted_queue')
      .innerJoin('tasks', 'tasks.task_key', 'hosted_queue.task_key')
      .select(['hosted_queue.task_key as taskKey', 'tasks.workflow_id as workflowId'])
      .where('hosted_queue.upstream_id', '=', upstreamId)
      .where('hosted_queue.state', '=', state);
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
