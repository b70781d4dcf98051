/**
 * Per-upstream OAuth (docs/oauth.md, "Connecting upstreams"): a `per_user` upstream says itself that
 * users connect it with OAuth (`oauth` = 1), instead of one deployment-wide switch applying to every
 * `per_user` upstream; and it may carry the client the gateway uses at its authorization server when
 * that server offers no dynamic registration (the id in the clear, the secret sealed with the key ring,
 * bound to the upstream's id). Existing rows stay `oauth` = 0: the legacy `connectUpstreams` setting
 * still makes every `per_user` upstream connectable.
 * Numbered 0015 (not 0014) because another branch adds its own 0014; migrations run unordered.
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0015UpstreamOAuth: Migration = ddlMigration(`
  alter table upstreams add column oauth integer not null default 0;
  alter table upstreams add column oauth_client_id text;
  alter table upstreams add column oauth_client_secret {blob};
`);
