/**
 * Retention and project deletion (docs/retention.md): `tasks.payload_expired_at` marks a task whose
 * payload (the encrypted `detail`) the payload retention removed; `projects.deleting_at` marks a project
 * whose deletion workflow runs (it stops serving at once). Indexes serve the purge scans.
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0004Retention: Migration = ddlMigration(`
  alter table tasks add column payload_expired_at text;
  alter table projects add column deleting_at text;
  create index tasks_last_updated on tasks (payload_expired_at, last_updated_at);
  create index tasks_created on tasks (created_at);
`);
