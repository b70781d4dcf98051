/**
 * An OAuth connection's renewal is leased across replicas (src/store/control-plane/renewal.ts): the
 * replica that sets `renewing_until` presents the refresh token, the others wait for its row. Two
 * replicas presenting one refresh token at once made a server that ends a grant on refresh-token reuse
 * end the connection.
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0028AuthorizationRenewalLease: Migration = ddlMigration(`
  alter table upstream_authorizations add column renewing_until text;
`);
