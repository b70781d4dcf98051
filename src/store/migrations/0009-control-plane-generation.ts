/**
 * One counter that every control-plane change bumps in its own transaction. API replicas cache what
 * they read per request (tokens, projects, access, credentials) and drop it all when the counter moves,
 * so a revoked token or removed member stops working on every replica within the check interval
 * (src/store/control-plane/serving-cache.ts), without reading the tables on every request.
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0009ControlPlaneGeneration: Migration = ddlMigration(`
  create table control_plane_generation (
    id integer primary key,
    generation bigint not null
  );
  insert into control_plane_generation (id, generation) values (1, 0);
`);
