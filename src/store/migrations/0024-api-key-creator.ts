/**
 * Issue 27: who created each project API key (`user:<id>`, `admin:<via>`; audit's actor form), so a call
 * made with a key counts as its creator's own for self-approval (docs/approvals.md). Keys created before
 * have none: their calls are nobody's own.
 */
import type { Kysely, Migration } from 'kysely';

export const m0024ApiKeyCreator: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('api_keys').addColumn('created_by', 'text').execute();
  },
};
