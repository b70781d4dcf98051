/**
 * Upstream address approval (docs/admin.md, "Upstream addresses"): `address_approved` = 1 when an
 * operator set the upstream's current address (the configuration file, the bootstrap file, the instance
 * admin), so its connections skip the address policy; 0 when a project manager set it, so every
 * connection is checked against `upstreams.networks.allow`. A manager who re-points an upstream clears it.
 *
 * Existing rows start at 0: nothing says who set their address, and before this migration anyone could
 * point an upstream anywhere. Upstreams from the configuration and bootstrap files are approved again at
 * the next start (re-applying them restates their URL); one added through the admin API is approved by
 * restating its URL there (`PATCH … {"url": …}` with the admin token) or with the CLI.
 * Numbered 0016; migrations run unordered, so another branch's own 0016 does not collide with it.
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0016UpstreamAddressApproval: Migration = ddlMigration(`
  alter table upstreams add column address_approved integer not null default 0;
`);
