/**
 * Issue 28 (docs/oauth.md): which client registration method the gateway last used at a `per_user`
 * upstream's authorization server (`oauth_registration`: `configured`, `metadata_document` or `dynamic`,
 * shown by the admin API, the CLI and the dashboard); an upstream's RFC 8693 token exchange settings
 * (`token_exchange`: JSON of issuer, client id, audience, scope; the client secret sealed apart in
 * `token_exchange_secret`, bound to the upstream's id); and the exchanged tokens, one per user and
 * upstream (`upstream_token_exchange`), sealed and bound to their row, user and upstream, with their
 * expiry and the upstream address they were obtained for.
 * Numbered 0018 (0017 is another branch's); migrations run unordered.
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0018UpstreamTokenExchange: Migration = ddlMigration(`
  alter table upstreams add column oauth_registration text;
  alter table upstreams add column token_exchange text;
  alter table upstreams add column token_exchange_secret {blob};

  create table upstream_token_exchange (
    id text primary key,
    upstream_id text not null,
    user_id text not null,
    token {blob} not null,
    expires_at text,
    address text not null,
    created_at text not null,
    updated_at text not null,
    constraint upstream_token_exchange_user_upstream unique (upstream_id, user_id)
  );
`);
