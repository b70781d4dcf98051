/**
 * Issue 24: the queue of hosted calls to an upstream with a `hosting.maxConcurrent` limit
 * (src/store/tasks/hosted-queue.ts): one row per hosted call that waits for, or holds, one of the upstream's
 * slots, in arrival order. In the database so the queue survives restarts of every process.
 */
import type { Kysely, Migration } from 'kysely';

export const m0021HostedQueue: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('hosted_queue')
      .addColumn('task_key', 'text', (c) => c.primaryKey())
      .addColumn('upstream_id', 'text', (c) => c.notNull())
      .addColumn('enqueued_at', 'text', (c) => c.notNull())
      /** `waiting` | `running`. */
      .addColumn('state', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('hosted_queue_upstream')
      .on('hosted_queue')
      .columns(['upstream_id', 'state', 'enqueued_at'])
      .execute();
  },
};
