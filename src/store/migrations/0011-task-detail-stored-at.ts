/**
 * Payloads are kept at most `retention.payloadTtlMs` from storage (docs/retention.md): a task's current
 * detail (status message, input requests, result, error) records when the gateway stored it, by its own
 * clock, so the payload purge counts from there for running and finished tasks alike. Rows from before
 * this migration count from `last_updated_at`.
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0011TaskDetailStoredAt: Migration = ddlMigration(`
  alter table tasks add column detail_stored_at text;
  create index tasks_detail_stored on tasks (detail_stored_at);
`);
