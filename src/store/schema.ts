/** Table types for Kysely. Timestamps are ISO-8601 strings so SQLite and PostgreSQL agree. */
import type { Generated } from 'kysely';

export interface TasksTable {
  /** SHA-256 of the gateway task id: the id itself is a credential and is never stored. */
  task_key: string;
  workflow_id: string;
  project: string;
  caller_kind: string;
  caller_id: string;
  upstream: string;
  tool: string;
  status: string;
  status_message: string | null;
  created_at: string;
  last_updated_at: string;
  ttl_ms: number | null;
  poll_interval_ms: number | null;
  /** Encrypted JSON of the status detail (input requests, result or error). */
  detail: Buffer | null;
}

export interface TaskEventsTable {
  id: Generated<number>;
  task_key: string;
  at: string;
  kind: string;
  status: string;
  status_message: string | null;
}

export interface Database {
  tasks: TasksTable;
  task_events: TaskEventsTable;
}
