/**
 * Binds each task to the upstream authorization it started with, so every follow-up can check that the
 * authorization is still valid. (The `project` column now holds the project id, not its slug: a project
 * deleted and re-created under the same slug must not inherit the old one's tasks.)
 */
import type { Kysely, Migration } from 'kysely';

export const m0003TaskBinding: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('tasks').addColumn('authorization_id', 'text').execute();
  },
};
