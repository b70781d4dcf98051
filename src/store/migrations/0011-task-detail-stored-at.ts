/**
 * Payloads are kept at most `retention.payloadTtlMs` from storage (docs/retention.md): a task's current
 * detail (status message, input requests, result, error) records when the gateway stored it, by its own
 * clock, so the payload purge counts from there for running and finished tasks alike. Rows from before
 * this migration count from `last_updated_at`.
 */
import type { Kysely, Migration } from 'kysely';

export const m0011TaskDetailStoredAt: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('tasks').addColumn('detail_stored_at', 'text').execute();
    await db.schema.createIndex('tasks_detail_stored').on('tasks').column('detail_stored_at').execute();
  },
};
