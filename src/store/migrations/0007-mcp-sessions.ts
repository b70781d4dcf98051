/**
 * 2025-era client sessions (docs/interop.md): the session itself lives in its sealed `Mcp-Session-Id`;
 * only ended sessions are written down, by nonce, until the token would have expired anyway.
 */
import type { Kysely, Migration } from 'kysely';

export const m0007McpSessions: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('ended_mcp_sessions')
      .addColumn('nonce', 'text', (c) => c.primaryKey())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('ended_mcp_sessions_expires')
      .on('ended_mcp_sessions')
      .column('expires_at')
      .execute();
  },
};
