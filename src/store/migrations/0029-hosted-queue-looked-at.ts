/**
 * When a queued hosted call last looked at its upstream's queue (src/store/tasks/hosted-queue.ts): a
 * waiting call looks at least once a minute, so a row not looked at for minutes is one whose workflow may
 * have closed without giving its place back (terminated: its task stays unfinished). Those few are asked
 * about, instead of every row ahead of a stuck call. Null: not looked at since this column came.
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0029HostedQueueLookedAt: Migration = ddlMigration(`
  alter table hosted_queue add column looked_at text;
`);
