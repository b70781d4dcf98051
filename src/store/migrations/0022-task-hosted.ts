/**
 * Issue 24: a task the gateway hosts (an ordinary tool call of an upstream run as the gateway's own
 * durable task, docs/hosted-tasks.md) is marked as such, so operators see which tasks are hosted
 * (the dashboard's Tasks view and task page, docs/dashboard.md). 1 = hosted, 0 = every other task
 * (rows from before this migration included: hosting arrived with migration 0020, and tasks hosted
 * before this one are not marked).
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0022TaskHosted: Migration = ddlMigration(`
  alter table tasks add column hosted integer not null default 0;
`);
