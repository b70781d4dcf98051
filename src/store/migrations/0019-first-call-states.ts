/**
 * The first call made by the API (docs/decisions.md, "The first call from the API"): a claim now moves
 * through more states (`sending` → `done` | `recorded` → `started`, or `lost`), and the creation
 * reconciler (src/temporal/creation-reconciler.ts) looks claims up by state and age every few seconds:
 * this index keeps that look-up off a scan of the table, which holds every declaring call of the last
 * payload retention period.
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0019FirstCallStates: Migration = ddlMigration(`
  create index first_calls_state_at on first_calls (state, at);
`);
