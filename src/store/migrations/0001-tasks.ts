/** Task records and their status history. Portable: see the helpers documented in ../database.ts. */
import type { Kysely, Migration } from 'kysely';
import { autoIncrementId, blobType } from '../dialect';

export const m0001Tasks: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('tasks')
      .addColumn('task_key', 'text', (c) => c.primaryKey())
      .addColumn('workflow_id', 'text', (c) => c.notNull())
      .addColumn('project', 'text', (c) => c.notNull())
      .addColumn('caller_kind', 'text', (c) => c.notNull())
      .addColumn('caller_id', 'text', (c) => c.notNull())
      .addColumn('upstream', 'text', (c) => c.notNull())
      .addColumn('tool', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('status_message', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_updated_at', 'text', (c) => c.notNull())
      .addColumn('ttl_ms', 'bigint')
      .addColumn('poll_interval_ms', 'integer')
      .addColumn('detail', blobType(db))
      .execute();
    await db.schema
      .createIndex('tasks_project_created')
      .on('tasks')
      .columns(['project', 'created_at'])
      .execute();
    await db.schema
      .createTable('task_events')
      .addColumn('id', ...autoIncrementId(db))
      .addColumn('task_key', 'text', (c) => c.notNull().references('tasks.task_key').onDelete('cascade'))
      .addColumn('at', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('status_message', 'text')
      .execute();
    await db.schema.createIndex('task_events_task').on('task_events').columns(['task_key', 'id']).execute();
  },
};
