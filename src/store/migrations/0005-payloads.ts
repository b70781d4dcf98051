/**
 * Task payloads (the request with its arguments, synchronous results and errors, input responses) in
 * their own table, encrypted and bound to their task and kind. Temporal carries only their ids, so a
 * payload's retention is one DELETE here, with nothing left behind in workflow histories.
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0005Payloads: Migration = ddlMigration(`
  create table payloads (
    id text primary key,
    task_key text not null,
    kind text not null,
    created_at text not null,
    ciphertext {blob} not null
  );
  create index payloads_created on payloads (created_at);
  create index payloads_task on payloads (task_key);
`);
