/**
 * Issue 24: an upstream's hosting policy (src/config/hosting.ts; docs/admin.md, "Hosted tools"): which
 * of its ordinary tools the gateway runs as its own durable tasks, and how. JSON in `hosting` (the
 * policy with its defaults applied), null for none: nothing hosted. Set through the admin API, the CLI
 * and the configuration and bootstrap files like the upstream's other settings.
 * Numbered 0020; migrations run unordered, so another branch's own 0020 does not collide with it.
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0020UpstreamHosting: Migration = ddlMigration(`
  alter table upstreams add column hosting text;
`);
