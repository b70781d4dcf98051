/**
 * Issue 27: who created each project API key (`user:<id>`, `admin:<via>`; audit's actor form), so a call
 * made with a key counts as its creator's own for self-approval (docs/approvals.md). Keys created before
 * have none: their calls are nobody's own.
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0024ApiKeyCreator: Migration = ddlMigration(`
  alter table api_keys add column created_by text;
`);
