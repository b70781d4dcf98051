/**
 * Retention and project deletion over tasks (docs/retention.md). Each function handles one bounded batch
 * in one transaction and returns how many tasks it handled, so a caller loops until a batch comes back
 * short. All are idempotent: a batch re-run after a crash finds only what is still left.
 */
import type { ExpressionBuilder, Kysely, SelectQueryBuilder } from 'kysely';
import { TERMINAL_TASK_STATUSES } from '../../protocol';
import type { Database } from '../schema';
import type { ActiveTaskRef } from './task-types';

/** How long the gateway keeps what it stores (the configuration's `retention`). */
export interface RetentionBounds {
  payloadTtlMs: number;
  metadataTtlMs: number;
}

/**
 * The `ttlMs` a client is told: the upstream's, never longer than the gateway keeps the task
 * (docs/retention.md). Metadata goes `metadataTtlMs` after creation, so no task lives longer; a finished
 * task's outcome goes `payloadTtlMs` after it was stored (tasks/get then answers "expired"), so its
 * lifetime ends there. `null` (unlimited upstream) becomes the gateway's own bound.
 */
export function advertisedTtlMs(
  t: { createdAt: string; ttlMs: number | null; terminal: boolean; detailStoredAt: string },
  bounds: RetentionBounds | undefined,
): number | null {
  if (!bounds) return t.ttlMs;
  let kept = bounds.metadataTtlMs;
  if (t.terminal) {
    const outcomeKept = Date.parse(t.detailStoredAt) + bounds.payloadTtlMs - Date.parse(t.createdAt);
    if (Number.isFinite(outcomeKept)) kept = Math.min(kept, Math.max(0, outcomeKept));
  }
  return t.ttlMs === null ? kept : Math.min(t.ttlMs, kept);
}

/**
 * Payload retention: everything stored before `cutoffIso` goes, whatever the task's state (payloads are
 * kept at most `payloadTtlMs` from storage; docs/retention.md):
 *
 * 1. a finished task whose outcome (the task's detail) was stored before the cutoff: the detail is
 *    dropped and `payload_expired_at` set (tasks/get answers "Task has expired"), with all its payloads;
 * 2. a running task whose current detail copy is that old (the watch refreshes it long before, unless no
 *    worker ran): the copy is dropped, the task keeps its status and gets a fresh copy at the next refresh;
 * 3. every payload row stored before the cutoff (arguments, answers, first results, superseded details):
 *    a running task needs them only briefly (its first call, the forwarding of an answer).
 */
export async function purgePayloadsBefore(
  db: Kysely<Database>,
  cutoffIso: string,
  batchSize: number,
  nowIso: string,
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const storedBefore = (eb: ExpressionBuilder<Database, 'tasks'>) =>
      eb(eb.fn.coalesce('detail_stored_at', 'last_updated_at'), '<', cutoffIso);
    const finished = await trx
      .selectFrom('tasks')
      .select('task_key')
      .where('payload_expired_at', 'is', null)
      .where('status', 'in', [...TERMINAL_TASK_STATUSES])
      .where(storedBefore)
      .limit(batchSize)
      .execute();
    const finishedKeys = finished.map((k) => k.task_key);
    if (finishedKeys.length > 0) {
      await trx
        .updateTable('tasks')
        .set({ detail: null, payload_expired_at: nowIso })
        .where('task_key', 'in', finishedKeys)
        .where('payload_expired_at', 'is', null)
        .execute();
      await trx.deleteFrom('payloads').where('task_key', 'in', finishedKeys).execute();
    }
    let left = batchSize - finishedKeys.length;
    const running =
      left <= 0
        ? []
        : await trx
            .selectFrom('tasks')
            .select('task_key')
            .where('status', 'not in', [...TERMINAL_TASK_STATUSES])
            .where('detail', 'is not', null)
            .where(storedBefore)
            .limit(left)
            .execute();
    if (running.length > 0) {
      await trx
        .updateTable('tasks')
        .set({ detail: null })
        .where(
          'task_key',
          'in',
          running.map((k) => k.task_key),
        )
        .execute();
    }
    left -= running.length;
    const stale =
      left <= 0
        ? []
        : await trx
            .selectFrom('payloads')
            .select('id')
            .where('created_at', '<', cutoffIso)
            .limit(left)
            .execute();
    if (stale.length > 0) {
      await trx
        .deleteFrom('payloads')
        .where(
          'id',
          'in',
          stale.map((r) => r.id),
        )
        .execute();
    }
    return finishedKeys.length + running.length + stale.length;
  });
}

/** Deletes terminal tasks created before `cutoffIso`, with their status history. */
export async function purgeMetadataBefore(
  db: Kysely<Database>,
  cutoffIso: string,
  batchSize: number,
): Promise<number> {
  return deleteBatch(db, batchSize, (qb) =>
    qb.where('created_at', '<', cutoffIso).where('status', 'in', [...TERMINAL_TASK_STATUSES]),
  );
}

/** A page (by task key, after `afterKey`) of a project's non-terminal tasks. */
export async function listActiveProjectTasks(
  db: Kysely<Database>,
  project: string,
  afterKey: string,
  limit: number,
): Promise<ActiveTaskRef[]> {
  const rows = await db
    .selectFrom('tasks')
    .select(['task_key', 'workflow_id'])
    .where('project', '=', project)
    .where('task_key', '>', afterKey)
    .where('status', 'not in', [...TERMINAL_TASK_STATUSES])
    .orderBy('task_key')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ taskKey: r.task_key, workflowId: r.workflow_id }));
}

/** Deletes a batch of a project's tasks (any status) with their history and payloads. */
export async function deleteProjectTasks(
  db: Kysely<Database>,
  project: string,
  batchSize: number,
): Promise<number> {
  return deleteBatch(db, batchSize, (qb) => qb.where('project', '=', project));
}

type TaskKeys = SelectQueryBuilder<Database, 'tasks', { task_key: string }>;

/** Deletes, in one transaction, up to `batchSize` of the tasks `pick` narrows the table to. */
async function deleteBatch(
  db: Kysely<Database>,
  batchSize: number,
  pick: (query: TaskKeys) => TaskKeys,
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const keys = await pick(trx.selectFrom('tasks').select('task_key')).limit(batchSize).execute();
    return deleteTasks(
      trx,
      keys.map((k) => k.task_key),
    );
  });
}

async function deleteTasks(trx: Kysely<Database>, keys: string[]): Promise<number> {
  if (keys.length === 0) return 0;
  await trx.deleteFrom('payloads').where('task_key', 'in', keys).execute();
  await trx.deleteFrom('task_events').where('task_key', 'in', keys).execute();
  // A call's approval request goes with its task (metadata retention, project deletion).
  await trx.deleteFrom('approvals').where('task_key', 'in', keys).execute();
  // A watch hub's row of a task deleted while running (project deletion; its workflow is stopped).
  await trx.deleteFrom('watch_hub').where('task_key', 'in', keys).execute();
  const deleted = await trx.deleteFrom('tasks').where('task_key', 'in', keys).executeTakeFirst();
  return Number(deleted.numDeletedRows);
}
