/**
 * Issue 23: a watch hub's lease is one row per hub, not one per task (src/store/tasks/watch-hub.ts). A
 * hub holding 20,000 tasks renewed them in one UPDATE that rewrote every row every few seconds (about
 * 200 ms of a worker's event loop on SQLite each time); now it renews its own row, and reads what it holds
 * from an index. A task row is held while its `lease_owner` is alive here, or (a row claimed by a hub of
 * an earlier version, which renews per row) while its `lease_until` has not passed.
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0027WatchHubOwners: Migration = ddlMigration(`
  create table watch_hub_owners (
    owner text primary key,
    alive_until text not null
  );
  -- What a hub reads at each renewal (its rows' keys and generations), from the index alone.
  create index watch_hub_owner_held on watch_hub (lease_owner, task_key, generation);
  drop index watch_hub_owner;
`);
