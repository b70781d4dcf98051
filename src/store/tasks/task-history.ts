/**
 * A task's history (the `task_events` rows): status changes as the workflow records them, and the
 * dashboard's assignments, which change who is assigned but never the protocol status.
 */
import type { Kysely } from 'kysely';
import type { TaskSnapshot, TaskStatus } from '../../protocol';
import type { Database } from '../schema';
import type { TaskSealing } from './task-sealing';
import type { TaskEvent } from './task-types';

/** Appends a status row (the status message encrypted like the task's own). */
export async function addStatusEvent(
  trx: Kysely<Database>,
  sealing: TaskSealing,
  taskKey: string,
  s: TaskSnapshot,
): Promise<void> {
  await trx
    .insertInto('task_events')
    .values({
      task_key: taskKey,
      at: s.lastUpdatedAt,
      kind: 'status',
      status: s.status,
      status_message: sealing.sealMessage(taskKey, s.statusMessage),
    })
    .execute();
}

export async function listEvents(
  db: Kysely<Database>,
  sealing: TaskSealing,
  taskKey: string,
): Promise<TaskEvent[]> {
  const rows = await db
    .selectFrom('task_events')
    .selectAll()
    .where('task_key', '=', taskKey)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({
    at: r.at,
    kind: r.kind,
    status: r.status as TaskStatus,
    ...(r.status_message !== null && { statusMessage: sealing.openMessage(taskKey, r.status_message) }),
    ...(r.actor != null && { actor: r.actor }),
    ...(r.assignee_user_id != null && { assigneeUserId: r.assignee_user_id }),
  }));
}

/**
 * Sets (or clears, with null) a task's assignee and records it in the task's history. The protocol
 * status is untouched: the history row repeats the current status.
 */
export async function assignTask(
  db: Kysely<Database>,
  lockRows: boolean,
  change: { taskKey: string; assigneeUserId: string | null; actor: string; at: string },
): Promise<'changed' | 'unchanged' | 'missing'> {
  const { taskKey, assigneeUserId, actor, at } = change;
  return db.transaction().execute(async (trx) => {
    const current = await trx
      .selectFrom('tasks')
      .select(['status', 'assignee_user_id'])
      .where('task_key', '=', taskKey)
      .$if(lockRows, (qb) => qb.forUpdate())
      .executeTakeFirst();
    if (!current) return 'missing';
    // Re-assigning to the same person changes nothing and writes no history.
    if ((current.assignee_user_id ?? null) === assigneeUserId) return 'unchanged';
    await trx
      .updateTable('tasks')
      .set({ assignee_user_id: assigneeUserId })
      .where('task_key', '=', taskKey)
      .execute();
    await trx
      .insertInto('task_events')
      .values({
        task_key: taskKey,
        at,
        kind: 'assignment',
        status: current.status,
        status_message: null,
        actor,
        assignee_user_id: assigneeUserId,
      })
      .execute();
    return 'changed';
  });
}
