/**
 * Retention and project deletion (docs/retention.md): `tasks.payload_expired_at` marks a task whose
 * payload (the encrypted `detail`) the payload retention removed; `projects.deleting_at` marks a project
 * whose deletion workflow runs (it stops serving at once). Indexes serve the purge scans.
 */
import type { Kysely, Migration } from 'kysely';

export const m0004Retention: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('tasks').addColumn('payload_expired_at', 'text').execute();
    await db.schema.alterTable('projects').addColumn('deleting_at', 'text').execute();
    await db.schema
      .createIndex('tasks_last_updated')
      .on('tasks')
      .columns(['payload_expired_at', 'last_updated_at'])
      .execute();
    await db.schema.createIndex('tasks_created').on('tasks').column('created_at').execute();
  },
};
