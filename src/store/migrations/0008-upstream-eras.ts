/**
 * 2025-era upstreams (docs/interop.md): what the last probe found out about each upstream (era, version,
 * when, why it failed), and the sessions the gateway holds with stateful 2025 upstreams, one per upstream
 * and credential scope, shared by every replica and worker. The session state (the upstream's
 * `Mcp-Session-Id` and its `initialize` result) is sealed, bound to its scope and nonce.
 */
import type { Kysely, Migration } from 'kysely';
import { blobType } from '../dialect';

export const m0008UpstreamEras: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    for (const column of ['protocol_era', 'protocol_version', 'probed_at', 'probe_error']) {
      await db.schema.alterTable('upstreams').addColumn(column, 'text').execute();
    }
    await db.schema
      .createTable('upstream_sessions')
      .addColumn('scope', 'text', (c) => c.primaryKey())
      .addColumn('upstream_id', 'text')
      .addColumn('nonce', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('protocol_version', 'text', (c) => c.notNull())
      .addColumn('state', blobType(db), (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('pinned_until', 'text')
      .execute();
    await db.schema
      .createIndex('upstream_sessions_upstream')
      .on('upstream_sessions')
      .column('upstream_id')
      .execute();
  },
};
