/**
 * Control plane: teams, users and their tokens, projects, memberships, API keys, upstreams, per-user
 * upstream authorizations, audit events. Portable across SQLite and PostgreSQL (see the helpers
 * documented in ../database.ts): text ids, ISO text timestamps, integer booleans, JSON as text.
 */
import type { Kysely, Migration } from 'kysely';
import { blobType } from '../dialect';

export const m0002ControlPlane: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const bytes = blobType(db);
    await db.schema
      .createTable('teams')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('slug', 'text', (c) => c.notNull().unique())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('users')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('handle', 'text', (c) => c.notNull().unique())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('team_members')
      .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('team_members_pk', ['team_id', 'user_id'])
      .execute();
    await db.schema.createIndex('team_members_user').on('team_members').column('user_id').execute();
    await db.schema
      .createTable('user_tokens')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('hint', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text')
      .addColumn('revoked_at', 'text')
      .execute();
    await db.schema.createIndex('user_tokens_user').on('user_tokens').column('user_id').execute();
    await db.schema
      .createTable('projects')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('slug', 'text', (c) => c.notNull().unique())
      .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id'))
      .addColumn('auth_mode', 'text', (c) => c.notNull())
      .addColumn('tool_profile', 'text', (c) => c.notNull())
      .addColumn('features', 'text', (c) => c.notNull())
      .addColumn('namespacing', 'integer', (c) => c.notNull())
      .addColumn('cache', 'text', (c) => c.notNull())
      .addColumn('limits', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('projects_team').on('projects').column('team_id').execute();
    await db.schema
      .createTable('project_members')
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('project_members_pk', ['project_id', 'user_id'])
      .execute();
    await db.schema.createIndex('project_members_user').on('project_members').column('user_id').execute();
    await db.schema
      .createTable('api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('key_hash', 'text', (c) => c.notNull().unique())
      .addColumn('hint', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('revoked_at', 'text')
      .execute();
    await db.schema.createIndex('api_keys_project').on('api_keys').column('project_id').execute();
    await db.schema
      .createTable('upstreams')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('alias', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('enabled', 'integer', (c) => c.notNull())
      .addColumn('auth_mode', 'text', (c) => c.notNull())
      .addColumn('auth_header', 'text')
      .addColumn('credential', bytes)
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addUniqueConstraint('upstreams_project_alias', ['project_id', 'alias'])
      .execute();
    await db.schema
      .createTable('upstream_authorizations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('upstream_id', 'text', (c) => c.notNull().references('upstreams.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('credential', bytes, (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text')
      .addColumn('revoked_at', 'text')
      .execute();
    await db.schema
      .createIndex('upstream_authorizations_upstream_user')
      .on('upstream_authorizations')
      .columns(['upstream_id', 'user_id'])
      .execute();
    await db.schema
      .createIndex('upstream_authorizations_user')
      .on('upstream_authorizations')
      .column('user_id')
      .execute();
    // No foreign key to projects: the audit trail of a project outlives the project's deletion.
    await db.schema
      .createTable('audit_events')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('at', 'text', (c) => c.notNull())
      .addColumn('project_id', 'text')
      .addColumn('actor', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('detail', 'text')
      .execute();
    await db.schema
      .createIndex('audit_events_project')
      .on('audit_events')
      .columns(['project_id', 'id'])
      .execute();
  },
};
