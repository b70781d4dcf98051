/**
 * Retention and project deletion over tasks (docs/retention.md). Each function handles one bounded batch
 * in one transaction and returns how many tasks it handled, so a caller loops until a batch comes back
 * short. All are idempotent: a batch re-run after a crash finds only what is still left.
 */
import type { Kysely, SelectQueryBuilder } from 'kysely';
import { TERMINAL_TASK_STATUSES } from '../protocol';
import type { Database } from './schema';
import type { ActiveTaskRef } from './task-types';

/**
 * Expires the payloads of terminal tasks stored before `cutoffIso` (the storage time is the terminal
 * write's `last_updated_at`): the encrypted detail is dropped and `payload_expired_at` set. Running
 * tasks keep their payload until they are terminal (docs/decisions.md, Retention).
 */
export async function purgePayloadsBefore(
  db: Kysely<Database>,
  cutoffIso: string,
  batchSize: number,
  nowIso?: string,
): Promise<number> {
  const expiredAt = nowIso ?? new Date().toISOString();
  return db.transaction().execute(async (trx) => {
    const keys = await trx
      .selectFrom('tasks')
      .select('task_key')
      .where('payload_expired_at', 'is', null)
      .where('last_updated_at', '<', cutoffIso)
      .where('status', 'in', [...TERMINAL_TASK_STATUSES])
      .limit(batchSize)
      .execute();
    if (keys.length > 0) {
      const taskKeys = keys.map((k) => k.task_key);
      await trx
        .updateTable('tasks')
        .set({ detail: null, payload_expired_at: expiredAt })
        .where('task_key', 'in', taskKeys)
        .where('payload_expired_at', 'is', null)
        .execute();
      await trx.deleteFrom('payloads').where('task_key', 'in', taskKeys).execute();
    }
    // Payloads stored before the cutoff that no running task needs: synchronous calls' requests and
    // results, and what is left of finished tasks.
    const stale = await trx
      .selectFrom('payloads')
      .select('id')
      .where('created_at', '<', cutoffIso)
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('tasks')
              .select('tasks.task_key')
              .whereRef('tasks.task_key', '=', 'payloads.task_key')
              .where('tasks.status', 'not in', [...TERMINAL_TASK_STATUSES]),
          ),
        ),
      )
      .limit(Math.max(0, batchSize - keys.length))
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
    return keys.length + stale.length;
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
  const deleted = await trx.deleteFrom('tasks').where('task_key', 'in', keys).executeTakeFirst();
  return Number(deleted.numDeletedRows);
}
