/**
 * Task records and their status history. The workflow is the single writer of a task's status (through
 * activities); the API only reads. A terminal status is final: later writes cannot overwrite it, which
 * keeps a late, stale observation from resurrecting a finished task.
 */
import { createHash } from 'node:crypto';
import type { Kysely, WhereInterface } from 'kysely';
import type { TaskSnapshot, TaskStatus } from '../protocol';
import { TERMINAL_TASK_STATUSES } from '../protocol';
import type { Cipher } from './cipher';
import { dialectOf } from './dialect';
import type { Database } from './schema';

/** A task's owner, as `principalId` writes it (`user:<id>`, `api_key:<id>`, `anonymous:anonymous`…). */
export interface Caller {
  kind: string;
  id: string;
}

export interface NewTask {
  taskKey: string;
  workflowId: string;
  /** Project id. */
  project: string;
  caller: Caller;
  upstream: string;
  tool: string;
  /** The upstream authorization the task started with; null for no or project credentials. */
  authorizationId: string | null;
  snapshot: TaskSnapshot;
}

export interface TaskRecord extends Omit<NewTask, 'snapshot'> {
  snapshot: TaskSnapshot;
  /** Set when payload retention removed the task's payload (result, error, input requests, metadata). */
  payloadExpired?: true;
  /** The dashboard's human assignee (a user id); assignment grants nothing (docs/dashboard.md). */
  assigneeUserId?: string;
}

/** The dashboard's task groups: `pending` is `working` + `input_required`. */
export const TASK_GROUPS = ['all', 'pending', 'completed', 'failed', 'cancelled'] as const;
export type TaskGroup = (typeof TASK_GROUPS)[number];

const GROUP_STATUSES: Record<Exclude<TaskGroup, 'all'>, TaskStatus[]> = {
  pending: ['working', 'input_required'],
  completed: ['completed'],
  failed: ['failed'],
  cancelled: ['cancelled'],
};

export interface TaskListQuery {
  /** Project id. */
  project: string;
  group: TaskGroup;
  /** Only tasks with a human assignee (`any`), or assigned to this user id. */
  assigned?: { kind: 'any' } | { kind: 'user'; userId: string };
  /** Position after which the page starts (newest first): the last row of the previous page. */
  after?: { createdAt: string; taskKey: string };
  limit: number;
}

/** A row of the dashboard's task list: metadata only (the status message is shown as metadata). */
export interface TaskSummary {
  taskKey: string;
  workflowId: string;
  caller: Caller;
  upstream: string;
  tool: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  assigneeUserId?: string;
}

/** A non-terminal task of a project, as project deletion stops it. */
export interface ActiveTaskRef {
  taskKey: string;
  workflowId: string;
}

export interface TaskEvent {
  at: string;
  /** `status` (a status change) or `assignment` (assigned, reassigned or unassigned). */
  kind: string;
  status: TaskStatus;
  statusMessage?: string;
  /** Assignment rows: who changed the assignment (`user:<id>`) and the new assignee (absent = none). */
  actor?: string;
  assigneeUserId?: string;
}

/** The encrypted part of a snapshot: status detail and the upstream's re-published metadata. */
type Detail = Pick<TaskSnapshot, 'inputRequests' | 'result' | 'error' | 'meta' | 'extensions'>;

/** The store key of a task id. The raw id is a bearer-like secret and is never persisted. */
export function taskKeyOf(taskId: string): string {
  return createHash('sha256').update(taskId, 'utf8').digest('hex');
}

export class TaskStore {
  private readonly lockRows: boolean;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly cipher: Cipher,
  ) {
    this.lockRows = dialectOf(db as Kysely<unknown>) === 'postgres';
  }

  /** Idempotent: a retried insert of the same task is a no-op. */
  async insertTask(task: NewTask): Promise<void> {
    const s = task.snapshot;
    await this.db.transaction().execute(async (trx) => {
      const inserted = await trx
        .insertInto('tasks')
        .values({
          task_key: task.taskKey,
          workflow_id: task.workflowId,
          project: task.project,
          caller_kind: task.caller.kind,
          caller_id: task.caller.id,
          upstream: task.upstream,
          tool: task.tool,
          authorization_id: task.authorizationId,
          status: s.status,
          status_message: this.sealMessage(task.taskKey, s.statusMessage),
          created_at: s.createdAt,
          last_updated_at: s.lastUpdatedAt,
          ttl_ms: s.ttlMs,
          poll_interval_ms: s.pollIntervalMs ?? null,
          detail: this.sealDetail(task.taskKey, s),
        })
        .onConflict((oc) => oc.column('task_key').doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) {
        await trx
          .insertInto('task_events')
          .values({
            task_key: task.taskKey,
            at: s.lastUpdatedAt,
            kind: 'status',
            status: s.status,
            status_message: this.sealMessage(task.taskKey, s.statusMessage),
          })
          .execute();
      }
    });
  }

  /**
   * Records a new observation. Adds a history row when status or status message changed, so a retried
   * write does not duplicate history. Returns false when the task is unknown or already terminal.
   */
  async recordSnapshot(taskKey: string, s: TaskSnapshot): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const current = await trx
        .selectFrom('tasks')
        .select(['status', 'status_message'])
        .where('task_key', '=', taskKey)
        // PostgreSQL: several worker processes may write one task; the row lock serializes this
        // read-check-write, so a status made terminal meanwhile is seen. SQLite serializes writers anyway.
        .$if(this.lockRows, (qb) => qb.forUpdate())
        .executeTakeFirst();
      if (!current || TERMINAL_TASK_STATUSES.has(current.status)) return false;
      await trx
        .updateTable('tasks')
        .set({
          status: s.status,
          status_message: this.sealMessage(taskKey, s.statusMessage),
          last_updated_at: s.lastUpdatedAt,
          ttl_ms: s.ttlMs,
          poll_interval_ms: s.pollIntervalMs ?? null,
          detail: this.sealDetail(taskKey, s),
        })
        .where('task_key', '=', taskKey)
        .execute();
      const previousMessage = this.openMessage(taskKey, current.status_message);
      if (current.status !== s.status || previousMessage !== s.statusMessage) {
        await trx
          .insertInto('task_events')
          .values({
            task_key: taskKey,
            at: s.lastUpdatedAt,
            kind: 'status',
            status: s.status,
            status_message: this.sealMessage(taskKey, s.statusMessage),
          })
          .execute();
      }
      return true;
    });
  }

  async getTask(taskKey: string): Promise<TaskRecord | undefined> {
    const row = await this.db
      .selectFrom('tasks')
      .selectAll()
      .where('task_key', '=', taskKey)
      .executeTakeFirst();
    if (!row) return undefined;
    const detail = row.detail ? this.cipher.openJson<Detail>(row.detail, detailAad(taskKey)) : {};
    const snapshot: TaskSnapshot = {
      status: row.status as TaskStatus,
      createdAt: row.created_at,
      lastUpdatedAt: row.last_updated_at,
      ttlMs: row.ttl_ms === null ? null : Number(row.ttl_ms),
      ...(row.status_message !== null && { statusMessage: this.openMessage(taskKey, row.status_message) }),
      ...(row.poll_interval_ms !== null && { pollIntervalMs: row.poll_interval_ms }),
      ...detail,
    };
    return {
      taskKey: row.task_key,
      workflowId: row.workflow_id,
      project: row.project,
      caller: { kind: row.caller_kind, id: row.caller_id },
      upstream: row.upstream,
      tool: row.tool,
      authorizationId: row.authorization_id,
      snapshot,
      ...(row.payload_expired_at !== null && { payloadExpired: true as const }),
      ...(row.assignee_user_id != null && { assigneeUserId: row.assignee_user_id }),
    };
  }

  // ── the dashboard (docs/dashboard.md) ────────────────────────────────────────────────────────────

  /** A page of a project's tasks, newest first (ties broken by task key). */
  async listProjectTasks(q: TaskListQuery): Promise<TaskSummary[]> {
    let query = this.db
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
      ])
      .where('project', '=', q.project);
    if (q.group !== 'all') query = query.where('status', 'in', GROUP_STATUSES[q.group]);
    query = whereAssigned(query, q.assigned);
    const after = q.after;
    if (after) {
      query = query.where((eb) =>
        eb.or([
          eb('created_at', '<', after.createdAt),
          eb.and([eb('created_at', '=', after.createdAt), eb('task_key', '<', after.taskKey)]),
        ]),
      );
    }
    const rows = await query
      .orderBy('created_at', 'desc')
      .orderBy('task_key', 'desc')
      .limit(q.limit)
      .execute();
    return rows.map((r) => ({
      taskKey: r.task_key,
      workflowId: r.workflow_id,
      caller: { kind: r.caller_kind, id: r.caller_id },
      upstream: r.upstream,
      tool: r.tool,
      status: r.status as TaskStatus,
      ...(r.status_message !== null && { statusMessage: this.openMessage(r.task_key, r.status_message) }),
      createdAt: r.created_at,
      lastUpdatedAt: r.last_updated_at,
      ...(r.assignee_user_id != null && { assigneeUserId: r.assignee_user_id }),
    }));
  }

  /** How many of a project's tasks fall in each group (under the same assignment filter as the list). */
  async countProjectTasks(
    project: string,
    assigned?: TaskListQuery['assigned'],
  ): Promise<Record<TaskGroup, number>> {
    const query = this.db
      .selectFrom('tasks')
      .select((eb) => ['status', eb.fn.countAll<string | number>().as('n')])
      .where('project', '=', project);
    const rows = await whereAssigned(query, assigned).groupBy('status').execute();
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
   * Sets (or clears, with null) a task's assignee and records it in the task's history. The protocol
   * status is untouched: the history row repeats the current status.
   */
  async assign(
    taskKey: string,
    assigneeUserId: string | null,
    actor: string,
    at: string,
  ): Promise<'changed' | 'unchanged' | 'missing'> {
    return this.db.transaction().execute(async (trx) => {
      const current = await trx
        .selectFrom('tasks')
        .select(['status', 'assignee_user_id'])
        .where('task_key', '=', taskKey)
        .$if(this.lockRows, (qb) => qb.forUpdate())
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

  // ── retention and project deletion (docs/retention.md) ───────────────────────────────────────────
  // Each method handles one bounded batch in one transaction and returns how many tasks it handled, so
  // a caller loops until a batch comes back short. All are idempotent: a batch re-run after a crash
  // finds only what is still left.

  /**
   * Expires the payloads of terminal tasks stored before `cutoffIso` (the storage time is the terminal
   * write's `last_updated_at`): the encrypted detail is dropped and `payload_expired_at` set. Running
   * tasks keep their payload until they are terminal (docs/decisions.md, Retention).
   */
  async purgePayloadsBefore(cutoffIso: string, batchSize: number, nowIso?: string): Promise<number> {
    const expiredAt = nowIso ?? new Date().toISOString();
    return this.db.transaction().execute(async (trx) => {
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
  async purgeMetadataBefore(cutoffIso: string, batchSize: number): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const keys = await trx
        .selectFrom('tasks')
        .select('task_key')
        .where('created_at', '<', cutoffIso)
        .where('status', 'in', [...TERMINAL_TASK_STATUSES])
        .limit(batchSize)
        .execute();
      return this.deleteTasks(
        trx,
        keys.map((k) => k.task_key),
      );
    });
  }

  /** A page (by task key, after `afterKey`) of a project's non-terminal tasks. */
  async listActiveProjectTasks(project: string, afterKey: string, limit: number): Promise<ActiveTaskRef[]> {
    const rows = await this.db
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
  async deleteProjectTasks(project: string, batchSize: number): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const keys = await trx
        .selectFrom('tasks')
        .select('task_key')
        .where('project', '=', project)
        .limit(batchSize)
        .execute();
      return this.deleteTasks(
        trx,
        keys.map((k) => k.task_key),
      );
    });
  }

  private async deleteTasks(trx: Kysely<Database>, keys: string[]): Promise<number> {
    if (keys.length === 0) return 0;
    await trx.deleteFrom('payloads').where('task_key', 'in', keys).execute();
    await trx.deleteFrom('task_events').where('task_key', 'in', keys).execute();
    const deleted = await trx.deleteFrom('tasks').where('task_key', 'in', keys).executeTakeFirst();
    return Number(deleted.numDeletedRows);
  }

  async listEvents(taskKey: string): Promise<TaskEvent[]> {
    const rows = await this.db
      .selectFrom('task_events')
      .selectAll()
      .where('task_key', '=', taskKey)
      .orderBy('id')
      .execute();
    return rows.map((r) => ({
      at: r.at,
      kind: r.kind,
      status: r.status as TaskStatus,
      ...(r.status_message !== null && { statusMessage: this.openMessage(taskKey, r.status_message) }),
      ...(r.actor != null && { actor: r.actor }),
      ...(r.assignee_user_id != null && { assigneeUserId: r.assignee_user_id }),
    }));
  }

  /**
   * Status messages are the upstream's free text and may echo arguments or results, so they are payload,
   * not metadata: stored encrypted (as text, so both databases keep one column type).
   */
  private sealMessage(taskKey: string, message: string | undefined): string | null {
    if (message === undefined) return null;
    return `enc:${this.cipher.seal(Buffer.from(message, 'utf8'), messageAad(taskKey)).toString('base64')}`;
  }

  private openMessage(taskKey: string, stored: string | null): string | undefined {
    if (stored === null) return undefined;
    if (!stored.startsWith('enc:')) return stored;
    return this.cipher.open(Buffer.from(stored.slice(4), 'base64'), messageAad(taskKey)).toString('utf8');
  }

  private sealDetail(taskKey: string, s: TaskSnapshot): Buffer | null {
    const detail: Detail = {
      ...(s.inputRequests && { inputRequests: s.inputRequests }),
      ...(s.result && { result: s.result }),
      ...(s.error && { error: s.error }),
      ...(s.meta && { meta: s.meta }),
      ...(s.extensions && { extensions: s.extensions }),
    };
    return Object.keys(detail).length === 0 ? null : this.cipher.sealJson(detail, detailAad(taskKey));
  }
}

/** The dashboard's Assigned filter, the same for a page of tasks and for the tab counts. */
function whereAssigned<QB extends WhereInterface<Database, 'tasks'>>(
  query: QB,
  assigned: TaskListQuery['assigned'],
): QB {
  if (assigned?.kind === 'any') return query.where('assignee_user_id', 'is not', null) as QB;
  if (assigned?.kind === 'user') return query.where('assignee_user_id', '=', assigned.userId) as QB;
  return query;
}

function messageAad(taskKey: string): string {
  return `task:${taskKey}:status-message`;
}

function detailAad(taskKey: string): string {
  return `task:${taskKey}:detail`;
}
