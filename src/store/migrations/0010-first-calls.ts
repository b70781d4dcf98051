/**
 * The first upstream `tools/call` of a task is claimed here before it is sent, and a task creation the
 * API gave up on is claimed here as abandoned: whichever comes first wins, so an abandoned creation never
 * sends its call, and a call is never sent twice, even by a local activity run again after a crash.
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0010FirstCalls: Migration = ddlMigration(`
  create table first_calls (
    task_key text primary key,
    state text not null,
    at text not null
  );
  create index first_calls_at on first_calls (at);
`);
