/**
 * List changes upstreams announced (`notifications/{tools,prompts,resources}/list_changed`), written by
 * the replica watching the upstream and read by every API replica that holds a listen stream for the
 * project, as `task_events` are for task status. Rows are short-lived: they only carry a change from
 * one replica to the others (docs/protocol-decisions.md, "Push"). `upstream_watches` are the leases that
 * let one replica at a time watch an upstream with a given credential, so a change is written once.
 */
import type { Kysely, Migration } from 'kysely';
import { autoIncrementId } from '../dialect';

export const m0013UpstreamEvents: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('upstream_events')
      .addColumn('id', ...autoIncrementId(db))
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('upstream_id', 'text', (c) => c.notNull())
      // The upstream and the credential that watched it (the catalog's cache key): who may be told.
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('at_ms', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('upstream_watches')
      .addColumn('scope', 'text', (c) => c.primaryKey())
      .addColumn('holder', 'text', (c) => c.notNull())
      .addColumn('expires_at_ms', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('upstream_events_at').on('upstream_events').column('at_ms').execute();
  },
};
