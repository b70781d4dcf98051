/**
 * Per-upstream OAuth (docs/oauth.md, "Connecting upstreams"): a `per_user` upstream says itself that
 * users connect it with OAuth (`oauth` = 1), instead of one deployment-wide switch applying to every
 * `per_user` upstream; and it may carry the client the gateway uses at its authorization server when
 * that server offers no dynamic registration (the id in the clear, the secret sealed with the key ring,
 * bound to the upstream's id). Existing rows stay `oauth` = 0: the legacy `connectUpstreams` setting
 * still makes every `per_user` upstream connectable.
 * Numbered 0015 (not 0014) because another branch adds its own 0014; migrations run unordered.
 */
import type { Kysely, Migration } from 'kysely';
import { blobType } from '../dialect';

export const m0015UpstreamOAuth: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('upstreams')
      .addColumn('oauth', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('upstreams').addColumn('oauth_client_id', 'text').execute();
    await db.schema.alterTable('upstreams').addColumn('oauth_client_secret', blobType(db)).execute();
  },
};
