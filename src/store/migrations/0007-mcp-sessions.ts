/**
 * 2025-era client sessions (docs/interop.md): the session itself lives in its sealed `Mcp-Session-Id`;
 * only ended sessions are written down, by nonce, until the token would have expired anyway. And the
 * answers such a client POSTs to requests the gateway sent it mid-call, parked (encrypted) until the
 * replica waiting on them picks them up.
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0007McpSessions: Migration = ddlMigration(`
  create table ended_mcp_sessions (
    nonce text primary key,
    expires_at text not null
  );
  create index ended_mcp_sessions_expires on ended_mcp_sessions (expires_at);

  create table mcp_client_answers (
    id text primary key,
    created_at text not null,
    ciphertext {blob} not null
  );
  create index mcp_client_answers_created on mcp_client_answers (created_at);
`);
