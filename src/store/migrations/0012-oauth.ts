/**
 * OAuth (docs/oauth.md): `external_identities` says which TaskRouter user an external subject (issuer +
 * the configured user claim) is, found or provisioned the first time the subject presents a valid token;
 * `upstream_oauth_clients` holds the gateway's own client registration at an upstream's authorization
 * server (one per issuer and redirect URI, the secret sealed), made when a user first connects; an
 * authorization made by connecting gains its sealed refresh token, the client it was issued to and the
 * resource it is for, so it renews itself before the access token expires.
 * Numbered 0012 (not 0011) because another branch adds its own 0011; migrations run unordered.
 */
import type { Kysely, Migration } from 'kysely';
import { blobType } from '../dialect';

export const m0012OAuth: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('external_identities')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('issuer', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addUniqueConstraint('external_identities_subject', ['issuer', 'subject'])
      .execute();
    await db.schema
      .createIndex('external_identities_user')
      .on('external_identities')
      .column('user_id')
      .execute();
    await db.schema
      .createTable('upstream_oauth_clients')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('issuer', 'text', (c) => c.notNull())
      .addColumn('redirect_uri', 'text', (c) => c.notNull())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('client_secret', blobType(db))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addUniqueConstraint('upstream_oauth_clients_key', ['issuer', 'redirect_uri'])
      .execute();
    await db.schema.alterTable('upstream_authorizations').addColumn('refresh_token', blobType(db)).execute();
    await db.schema.alterTable('upstream_authorizations').addColumn('oauth_client_id', 'text').execute();
    await db.schema.alterTable('upstream_authorizations').addColumn('oauth_resource', 'text').execute();
  },
};
