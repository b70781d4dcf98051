/**
 * The project dashboard (docs/dashboard.md): a human assignee per task, assignment rows in the task's
 * history next to status rows (`kind = 'assignment'`, with who assigned and to whom), and dashboard
 * sign-in sessions (the session secret stored only as SHA-256, bound to the personal access token used to
 * sign in, so revoking the token ends the session).
 */
import type { Kysely, Migration } from 'kysely';

export const m0006Dashboard: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('tasks').addColumn('assignee_user_id', 'text').execute();
    await db.schema.alterTable('task_events').addColumn('actor', 'text').execute();
    await db.schema.alterTable('task_events').addColumn('assignee_user_id', 'text').execute();
    await db.schema
      .createIndex('tasks_project_assignee')
      .on('tasks')
      .columns(['project', 'assignee_user_id', 'status'])
      .execute();
    // Tab counts group a project's tasks by status on every refresh: a covering index keeps that cheap.
    await db.schema.createIndex('tasks_project_status').on('tasks').columns(['project', 'status']).execute();
    await db.schema
      .createTable('dashboard_sessions')
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('token_id', 'text', (c) => c.notNull())
      .addColumn('csrf_token', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('dashboard_sessions_expires')
      .on('dashboard_sessions')
      .column('expires_at')
      .execute();
  },
};
