/**
 * When a running task's upstream is due to be polled while no watch activity polls it (docs/operators.md,
 * "Watch lag"): set when a watch ends and the workflow is to start the next one (and when the task is
 * recorded, before its first watch), cleared when a watch starts or the task ends. Null for a task being
 * watched, or finished. The oldest value per project and upstream is the watch lag `/metrics` reports.
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0017TaskWatchDue: Migration = ddlMigration(`
  alter table tasks add column watch_due_at text;
  create index tasks_watch_due on tasks (watch_due_at);
`);
