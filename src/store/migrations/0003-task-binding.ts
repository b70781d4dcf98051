/**
 * Binds each task to the upstream authorization it started with, so every follow-up can check that the
 * authorization is still valid. (The `project` column now holds the project id, not its slug: a project
 * deleted and re-created under the same slug must not inherit the old one's tasks.)
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0003TaskBinding: Migration = ddlMigration(`
  alter table tasks add column authorization_id text;
`);
