/**
 * 2025-era upstreams (docs/interop.md): what the last probe found out about each upstream (era, version,
 * when, why it failed), and the sessions the gateway holds with stateful 2025 upstreams, one per upstream
 * and credential scope, shared by every replica and worker. The session state (the upstream's
 * `Mcp-Session-Id` and its `initialize` result) is sealed, bound to its scope and nonce.
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0008UpstreamEras: Migration = ddlMigration(`
  alter table upstreams add column protocol_era text;
  alter table upstreams add column protocol_version text;
  alter table upstreams add column probed_at text;
  alter table upstreams add column probe_error text;

  create table upstream_sessions (
    scope text primary key,
    upstream_id text,
    nonce text not null,
    url text not null,
    protocol_version text not null,
    state {blob} not null,
    created_at text not null,
    pinned_until text
  );
  create index upstream_sessions_upstream on upstream_sessions (upstream_id);
`);
