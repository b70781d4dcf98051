/**
 * The project dashboard (docs/dashboard.md): a human assignee per task, assignment rows in the task's
 * history next to status rows (`kind = 'assignment'`, with who assigned and to whom), and dashboard
 * sign-in sessions (the session secret stored only as SHA-256, bound to the personal access token used to
 * sign in, so revoking the token ends the session).
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0006Dashboard: Migration = ddlMigration(`
  alter table tasks add column assignee_user_id text;
  alter table task_events add column actor text;
  alter table task_events add column assignee_user_id text;
  create index tasks_project_assignee on tasks (project, assignee_user_id, status);
  -- Tab counts group a project's tasks by status on every refresh: a covering index keeps that cheap.
  create index tasks_project_status on tasks (project, status);

  create table dashboard_sessions (
    id_hash text primary key,
    user_id text not null,
    token_id text not null,
    csrf_token text not null,
    created_at text not null,
    expires_at text not null
  );
  create index dashboard_sessions_expires on dashboard_sessions (expires_at);
`);
