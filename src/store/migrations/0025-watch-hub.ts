/**
 * Issue 23: the watch hub's table (src/store/tasks/watch-hub.ts, docs/decisions.md, "The watch hub"):
 * one row per running task whose workflow asked to be watched by a hub (`tasks.watchBy: hub`), with what
 * one poll needs, when the next poll is due, and which worker's hub holds it until when (its lease).
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0025WatchHub: Migration = ddlMigration(`
  create table watch_hub (
    task_key text primary key,
    workflow_id text not null,
    project text not null,
    upstream text not null,
    -- The enlisting run's token ('<runId>/<n>'): the signal answering it carries it back.
    generation text not null,
    -- JSON of the watch input (WatchUpstreamTaskInput): upstream ref, known key, open input.
    watch text not null,
    poll_interval_ms integer not null,
    due_at text not null,
    lease_owner text,
    lease_until text
  );
  create index watch_hub_due on watch_hub (due_at);
  create index watch_hub_owner on watch_hub (lease_owner);
`);
