/**
 * Issue 23: the watch hub's table (src/store/tasks/watch-hub.ts, docs/decisions.md, "The watch hub"):
 * one row per running task whose workflow asked to be watched by a hub (`tasks.watchBy: hub`), with what
 * one poll needs, when the next poll is due, and which worker's hub holds it until when (its lease).
 */
import type { Kysely, Migration } from 'kysely';

export const m0025WatchHub: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('watch_hub')
      .addColumn('task_key', 'text', (c) => c.primaryKey())
      .addColumn('workflow_id', 'text', (c) => c.notNull())
      .addColumn('project', 'text', (c) => c.notNull())
      .addColumn('upstream', 'text', (c) => c.notNull())
      /** The enlisting run's token (`<runId>/<n>`): the signal answering it carries it back. */
      .addColumn('generation', 'text', (c) => c.notNull())
      /** JSON of the watch input (WatchUpstreamTaskInput): upstream ref, known key, open input. */
      .addColumn('watch', 'text', (c) => c.notNull())
      .addColumn('poll_interval_ms', 'integer', (c) => c.notNull())
      .addColumn('due_at', 'text', (c) => c.notNull())
      .addColumn('lease_owner', 'text')
      .addColumn('lease_until', 'text')
      .execute();
    await db.schema.createIndex('watch_hub_due').on('watch_hub').columns(['due_at']).execute();
    await db.schema.createIndex('watch_hub_owner').on('watch_hub').columns(['lease_owner']).execute();
  },
};
