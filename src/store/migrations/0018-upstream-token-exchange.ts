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
import type { Kysely, Migration } from 'kysely';
import { blobType } from '../dialect';

export const m0018UpstreamTokenExchange: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('upstreams').addColumn('oauth_registration', 'text').execute();
    await db.schema.alterTable('upstreams').addColumn('token_exchange', 'text').execute();
    await db.schema.alterTable('upstreams').addColumn('token_exchange_secret', blobType(db)).execute();
    await db.schema
      .createTable('upstream_token_exchange')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('upstream_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('token', blobType(db), (c) => c.notNull())
      .addColumn('expires_at', 'text')
      .addColumn('address', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addUniqueConstraint('upstream_token_exchange_user_upstream', ['upstream_id', 'user_id'])
      .execute();
  },
};
