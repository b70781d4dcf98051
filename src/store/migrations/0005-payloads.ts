/**
 * Task payloads (the request with its arguments, synchronous results and errors, input responses) in
 * their own table, encrypted and bound to their task and kind. Temporal carries only their ids, so a
 * payload's retention is one DELETE here, with nothing left behind in workflow histories.
 */
import type { Kysely, Migration } from 'kysely';
import { blobType } from '../dialect';

export const m0005Payloads: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('payloads')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('task_key', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('ciphertext', blobType(db), (c) => c.notNull())
      .execute();
    await db.schema.createIndex('payloads_created').on('payloads').column('created_at').execute();
    await db.schema.createIndex('payloads_task').on('payloads').column('task_key').execute();
  },
};
