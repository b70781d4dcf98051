/**
 * OAuth (docs/oauth.md): `external_identities` says which TaskRouter user an external subject (issuer +
 * the configured user claim) is, found or provisioned the first time the subject presents a valid token;
 * `upstream_oauth_clients` holds the gateway's own client registration at an upstream's authorization
 * server (one per issuer and redirect URI, the secret sealed), made when a user first connects; an
 * authorization made by connecting gains its sealed refresh token, the client it was issued to and the
 * resource it is for, so it renews itself before the access token expires.
 * Numbered 0012 (not 0011) because another branch adds its own 0011; migrations run unordered.
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0012OAuth: Migration = ddlMigration(`
  create table external_identities (
    id text primary key,
    issuer text not null,
    subject text not null,
    user_id text not null references users (id) on delete cascade,
    created_at text not null,
    constraint external_identities_subject unique (issuer, subject)
  );
  create index external_identities_user on external_identities (user_id);

  create table upstream_oauth_clients (
    id text primary key,
    issuer text not null,
    redirect_uri text not null,
    client_id text not null,
    client_secret {blob},
    created_at text not null,
    constraint upstream_oauth_clients_key unique (issuer, redirect_uri)
  );

  alter table upstream_authorizations add column refresh_token {blob};
  alter table upstream_authorizations add column oauth_client_id text;
  alter table upstream_authorizations add column oauth_resource text;
`);
