/**
 * List changes upstreams announced (`notifications/{tools,prompts,resources}/list_changed`), written by
 * the replica watching the upstream and read by every API replica that holds a listen stream for the
 * project, as `task_events` are for task status. Rows are short-lived: they only carry a change from
 * one replica to the others (docs/protocol-decisions.md, "Push"). `upstream_watches` are the leases that
 * let one replica at a time watch an upstream with a given credential, so a change is written once.
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0013UpstreamEvents: Migration = ddlMigration(`
  create table upstream_events (
    id {auto_increment_id},
    project_id text not null,
    upstream_id text not null,
    -- The upstream and the credential that watched it (the catalog's cache key): who may be told.
    scope text not null,
    kind text not null,
    at_ms bigint not null
  );

  create table upstream_watches (
    scope text primary key,
    holder text not null,
    expires_at_ms bigint not null
  );

  create index upstream_events_at on upstream_events (at_ms);
`);
