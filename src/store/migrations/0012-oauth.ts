/**
 * OAuth (docs/oauth.md): `external_identities` says which TaskRouter user an external subject (issuer +
 * the configured user claim) is, found or provisioned the first time the subject presents a valid token.
 * Numbered 0012 (not 0011) because another branch adds its own 0011; migrations run unordered.
 */
import type { Kysely, Migration } from 'kysely';

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
  },
};
