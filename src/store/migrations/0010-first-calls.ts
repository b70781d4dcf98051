/**
 * The first upstream `tools/call` of a task is claimed here before it is sent, and a task creation the
 * API gave up on is claimed here as abandoned: whichever comes first wins, so an abandoned creation never
 * sends its call, and a call is never sent twice, even by a local activity run again after a crash.
 */
import type { Kysely, Migration } from 'kysely';

export const m0010FirstCalls: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('first_calls')
      .addColumn('task_key', 'text', (c) => c.primaryKey())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('first_calls_at').on('first_calls').column('at').execute();
  },
};
