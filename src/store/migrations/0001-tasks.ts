/** Task records and their status history. Portable: see the helpers documented in ../database.ts. */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0001Tasks: Migration = ddlMigration(`
  create table tasks (
    task_key text primary key,
    workflow_id text not null,
    project text not null,
    caller_kind text not null,
    caller_id text not null,
    upstream text not null,
    tool text not null,
    status text not null,
    status_message text,
    created_at text not null,
    last_updated_at text not null,
    ttl_ms bigint,
    poll_interval_ms integer,
    detail {blob}
  );
  create index tasks_project_created on tasks (project, created_at);

  create table task_events (
    id {auto_increment_id},
    task_key text not null references tasks (task_key) on delete cascade,
    at text not null,
    kind text not null,
    status text not null,
    status_message text
  );
  create index task_events_task on task_events (task_key, id);
`);
