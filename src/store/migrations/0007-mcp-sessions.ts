/**
 * 2025-era client sessions (docs/interop.md): the session itself lives in its sealed `Mcp-Session-Id`;
 * only ended sessions are written down, by nonce, until the token would have expired anyway. And the
 * answers such a client POSTs to requests the gateway sent it mid-call, parked (encrypted) until the
 * replica waiting on them picks them up.
 */
import type { Kysely, Migration } from 'kysely';
import { blobType } from '../dialect';

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
    await db.schema
      .createTable('mcp_client_answers')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('ciphertext', blobType(db), (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('mcp_client_answers_created')
      .on('mcp_client_answers')
      .column('created_at')
      .execute();
  },
};
