/**
 * Issue 24: the queue of hosted calls to an upstream with a `hosting.maxConcurrent` limit
 * (src/store/tasks/hosted-queue.ts): one row per hosted call that waits for, or holds, one of the upstream's
 * slots, in arrival order. In the database so the queue survives restarts of every process.
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0021HostedQueue: Migration = ddlMigration(`
  create table hosted_queue (
    task_key text primary key,
    upstream_id text not null,
    enqueued_at text not null,
    -- 'waiting' | 'running'.
    state text not null
  );
  create index hosted_queue_upstream on hosted_queue (upstream_id, state, enqueued_at);
`);
