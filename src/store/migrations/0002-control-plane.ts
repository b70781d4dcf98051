/**
 * Control plane: teams, users and their tokens, projects, memberships, API keys, upstreams, per-user
 * upstream authorizations, audit events. Portable across SQLite and PostgreSQL (see the helpers
 * documented in ../database.ts): text ids, ISO text timestamps, integer booleans, JSON as text.
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0002ControlPlane: Migration = ddlMigration(`
  create table teams (
    id text primary key,
    slug text not null unique,
    name text not null,
    created_at text not null
  );

  create table users (
    id text primary key,
    handle text not null unique,
    name text not null,
    created_at text not null
  );

  create table team_members (
    team_id text not null references teams (id) on delete cascade,
    user_id text not null references users (id) on delete cascade,
    created_at text not null,
    constraint team_members_pk primary key (team_id, user_id)
  );
  create index team_members_user on team_members (user_id);

  create table user_tokens (
    id text primary key,
    user_id text not null references users (id) on delete cascade,
    name text not null,
    token_hash text not null unique,
    hint text not null,
    created_at text not null,
    expires_at text,
    revoked_at text
  );
  create index user_tokens_user on user_tokens (user_id);

  create table projects (
    id text primary key,
    slug text not null unique,
    team_id text not null references teams (id),
    auth_mode text not null,
    tool_profile text not null,
    features text not null,
    namespacing integer not null,
    cache text not null,
    limits text not null,
    created_at text not null,
    updated_at text not null
  );
  create index projects_team on projects (team_id);

  create table project_members (
    project_id text not null references projects (id) on delete cascade,
    user_id text not null references users (id) on delete cascade,
    created_at text not null,
    constraint project_members_pk primary key (project_id, user_id)
  );
  create index project_members_user on project_members (user_id);

  create table api_keys (
    id text primary key,
    project_id text not null references projects (id) on delete cascade,
    name text not null,
    key_hash text not null unique,
    hint text not null,
    created_at text not null,
    revoked_at text
  );
  create index api_keys_project on api_keys (project_id);

  create table upstreams (
    id text primary key,
    project_id text not null references projects (id) on delete cascade,
    alias text not null,
    url text not null,
    enabled integer not null,
    auth_mode text not null,
    auth_header text,
    credential {blob},
    created_at text not null,
    updated_at text not null,
    constraint upstreams_project_alias unique (project_id, alias)
  );

  create table upstream_authorizations (
    id text primary key,
    upstream_id text not null references upstreams (id) on delete cascade,
    user_id text not null references users (id) on delete cascade,
    credential {blob} not null,
    created_at text not null,
    updated_at text not null,
    expires_at text,
    revoked_at text
  );
  create index upstream_authorizations_upstream_user on upstream_authorizations (upstream_id, user_id);
  create index upstream_authorizations_user on upstream_authorizations (user_id);

  -- No foreign key to projects: the audit trail of a project outlives the project's deletion.
  create table audit_events (
    id text primary key,
    at text not null,
    project_id text,
    actor text not null,
    action text not null,
    detail text
  );
  create index audit_events_project on audit_events (project_id, id);
`);
