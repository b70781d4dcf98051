/**
 * The dashboard's reads over a project's tasks (docs/dashboard.md): a page of the task list, newest
 * first, and the per-group counts on its tabs, both under the same filters (Assigned, Hosted).
 */
import type { Kysely, WhereInterface } from 'kysely';
import { z } from 'zod';
import type { TaskStatus } from '../../protocol';
import type { Database } from '../schema';
import type { TaskSealing } from './task-sealing';
import type { TaskFilters, TaskGroup, TaskListQuery, TaskSummary } from './task-types';

const GROUP_STATUSES: Record<Exclude<TaskGroup, 'all'>, TaskStatus[]> = {
  pending: ['working', 'input_required'],
  completed: ['completed'],
  failed: ['failed'],
  cancelled: ['cancelled'],
};

/** A page of a project's tasks, newest first (ties broken by task key). */
export async function listProjectTasks(
  db: Kysely<Database>,
  sealing: TaskSealing,
  q: TaskListQuery,
): Promise<TaskSummary[]> {
  let query = db
    .selectFrom('tasks')
    .select([
      'task_key',
      'workflow_id',
      'caller_kind',
      'caller_id',
      'upstream',
      'tool',
      'status',
      'status_message',
      'created_at',
      'last_updated_at',
      'assignee_user_id',
      'hosted',
    ])
    .where('project', '=', q.project);
  if (q.group !== 'all') query = query.where('status', 'in', GROUP_STATUSES[q.group]);
  if (q.caller) query = query.where('caller_kind', '=', q.caller.kind).where('caller_id', '=', q.caller.id);
  query = whereFilters(query, q);
  const after = q.after;
  if (after) {
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '<', after.createdAt),
        eb.and([eb('created_at', '=', after.createdAt), eb('task_key', '<', after.taskKey)]),
      ]),
    );
  }
  const rows = await query.orderBy('created_at', 'desc').orderBy('task_key', 'desc').limit(q.limit).execute();
  return rows.map((r) => ({
    taskKey: r.task_key,
    workflowId: r.workflow_id,
    caller: { kind: r.caller_kind, id: r.caller_id },
    upstream: r.upstream,
    tool: r.tool,
    status: r.status as TaskStatus,
    ...(r.status_message !== null && { statusMessage: sealing.openMessage(r.task_key, r.status_message) }),
    createdAt: r.created_at,
    lastUpdatedAt: r.last_updated_at,
    ...(r.assignee_user_id != null && { assigneeUserId: r.assignee_user_id }),
    ...(Number(r.hosted ?? 0) === 1 && { hosted: true as const }),
  }));
}

/** How many of a project's tasks fall in each group (under the same filters as the list). */
export async function countProjectTasks(
  db: Kysely<Database>,
  project: string,
  filters: TaskFilters = {},
): Promise<Record<TaskGroup, number>> {
  const query = db
    .selectFrom('tasks')
    .select((eb) => ['status', eb.fn.countAll<string | number>().as('n')])
    .where('project', '=', project);
  const rows = await whereFilters(query, filters).groupBy('status').execute();
  const counts: Record<TaskGroup, number> = { all: 0, pending: 0, completed: 0, failed: 0, cancelled: 0 };
  for (const row of rows) {
    const n = Number(row.n);
    counts.all += n;
    for (const [group, statuses] of Object.entries(GROUP_STATUSES)) {
      if (statuses.includes(row.status as TaskStatus)) counts[group as TaskGroup] += n;
    }
  }
  return counts;
}

/**
 * A project's tasks not yet ended under `filters`, counted up to `upTo` (a bound's check needs no more):
 * the pending group's statuses, named rather than the ended ones excluded, are short ranges of the
 * project-and-status index, never the project's ended tasks (kept 90 days).
 */
export async function countPendingProjectTasks(
  db: Kysely<Database>,
  project: string,
  filters: TaskFilters,
  upTo: number,
): Promise<number> {
  const pending = whereFilters(
    db
      .selectFrom('tasks')
      .select('task_key')
      .where('project', '=', project)
      .where('status', 'in', GROUP_STATUSES.pending),
    filters,
  ).limit(upTo);
  const row = await db
    .selectFrom(pending.as('pending'))
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The dashboard's Assigned and Hosted filters, the same for a page of tasks and for the tab counts. */
function whereFilters<QB extends WhereInterface<Database, 'tasks'>>(query: QB, filters: TaskFilters): QB {
  let q = query;
  const assigned = filters.assigned;
  if (assigned?.kind === 'any') q = q.where('assignee_user_id', 'is not', null) as QB;
  if (assigned?.kind === 'user') q = q.where('assignee_user_id', '=', assigned.userId) as QB;
  if (filters.hosted === true) q = q.where('hosted', '=', 1) as QB;
  return q;
}

/** Where a page of a task list ends: the last row's creation time and key (newest first). */
export interface TaskPosition {
  createdAt: string;
  taskKey: string;
}

const CursorSchema = z.strictObject({ c: z.string().max(40), k: z.string().regex(/^[0-9a-f]{64}$/) });

/** An opaque cursor for the page after `last`. */
export function encodeTaskCursor(last: TaskPosition): string {
  return Buffer.from(JSON.stringify({ c: last.createdAt, k: last.taskKey }), 'utf8').toString('base64url');
}

/** The position a cursor names; undefined when it is not one of ours. */
export function decodeTaskCursor(cursor: string): TaskPosition | undefined {
  try {
    const parsed = CursorSchema.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
    return { createdAt: parsed.c, taskKey: parsed.k };
  } catch {
    return undefined;
  }
}
