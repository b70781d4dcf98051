/**
 * Task records and their status history. The workflow writes a task's status (through activities), and
 * so does the poll that sees an upstream task complete or fail, first (src/activities/watch-poll.ts); the
 * API only reads. A terminal status is final: later writes cannot overwrite it, which keeps a late, stale
 * observation from resurrecting a finished task.
 *
 * TaskStore is the one face callers see; the dashboard's reads (task-listing.ts), the history
 * (task-history.ts), retention and project deletion (task-retention.ts) and the encrypted columns
 * (task-sealing.ts) live in their own modules.
 */
import type { CompiledQuery, Kysely } from 'kysely';
import type { TaskSnapshot, TaskStatus } from '../../protocol';
import { TERMINAL_TASK_STATUSES } from '../../protocol';
import type { Cipher } from '../cipher';
import { dialectOf } from '../dialect';
import type { Database } from '../schema';
import { addStatusEvent, assignTask, listEvents } from './task-history';
import { StatusEventFeed } from './status-feed';
import { countPendingProjectTasks, countProjectTasks, listProjectTasks } from './task-listing';
import type { RetentionBounds } from './task-retention';
import {
  advertisedTtlMs,
  deleteProjectTasks,
  listActiveProjectTasks,
  purgeMetadataBefore,
  purgePayloadsBefore,
} from './task-retention';
import { parseAnsweredInputs, recordAnsweredInputs } from './answered-inputs';
import { TaskSealing } from './task-sealing';
import type { OverdueWatch } from './task-watch';
import { deadHubSince, overdueWatches, watchDue, watchStarted } from './task-watch';
import type {
  ActiveTaskRef,
  NewTask,
  TaskEvent,
  TaskGroup,
  TaskListQuery,
  TaskRecord,
  TaskSummary,
} from './task-types';

// Callers import the vocabulary from here, with the store.
export * from './task-types';

export interface TaskStoreOptions {
  /** The store's clock: when a task's detail was stored (its payload clock, docs/retention.md). */
  now?: () => Date;
  /** What the gateway keeps: the `ttlMs` clients are told never outlives it (docs/retention.md). */
  retention?: RetentionBounds;
}

/** A row of getTask's statement (TaskStore.compileTaskRead). */
type TaskReadRow = ReturnType<TaskStore['compileTaskRead']> extends CompiledQuery<infer R> ? R : never;

export class TaskStore {
  private readonly lockRows: boolean;
  private readonly sealing: TaskSealing;
  private readonly now: () => Date;
  private readonly retention: RetentionBounds | undefined;
  /** getTask's statement, compiled at its first use (compileTaskRead). */
  private taskRead: CompiledQuery<TaskReadRow> | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    cipher: Cipher,
    opts: TaskStoreOptions = {},
  ) {
    this.lockRows = dialectOf(db as Kysely<unknown>) === 'postgres';
    this.sealing = new TaskSealing(cipher);
    this.now = opts.now ?? (() => new Date());
    this.retention = opts.retention;
  }

  /** Idempotent: a retried insert of the same task is a no-op. False when the task was already there. */
  async insertTask(task: NewTask): Promise<boolean> {
    return this.db.transaction().execute((trx) => this.insertTaskIn(trx, task));
  }

  /** `insertTask` within a transaction the caller holds (the task recorded with other writes). */
  async insertTaskIn(trx: Kysely<Database>, task: NewTask): Promise<boolean> {
    const s = task.snapshot;
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
        status_message: this.sealing.sealMessage(task.taskKey, s.statusMessage),
        created_at: s.createdAt,
        last_updated_at: s.lastUpdatedAt,
        ttl_ms: s.ttlMs,
        poll_interval_ms: s.pollIntervalMs ?? null,
        detail: this.sealing.sealDetail(task.taskKey, s),
        detail_stored_at: this.now().toISOString(),
        hosted: task.hosted === true ? 1 : 0,
        // Due for its first watch from now on, or from when its first poll is due (task-watch.ts).
        watch_due_at: TERMINAL_TASK_STATUSES.has(s.status)
          ? null
          : (task.firstPollDueAt ?? this.now().toISOString()),
      })
      .onConflict((oc) => oc.column('task_key').doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return false;
    await addStatusEvent(trx, this.sealing, task.taskKey, s);
    return true;
  }

  /**
   * Records a new observation. Adds a history row when status or status message changed, so a retried
   * write does not duplicate history. Returns false when the task is unknown or already terminal.
   * `alsoIn` writes what belongs with it in its transaction, whether or not the record changes anything
   * (one commit instead of two), through `trx` only: on SQLite a write through the store's own handle
   * would wait for the one connection this transaction holds. It runs before the row is locked, so it must
   * not lock rows of its own (PostgreSQL).
   */
  async recordSnapshot(
    taskKey: string,
    s: TaskSnapshot,
    alsoIn?: (trx: Kysely<Database>) => Promise<void>,
  ): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await alsoIn?.(trx);
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
          status_message: this.sealing.sealMessage(taskKey, s.statusMessage),
          last_updated_at: s.lastUpdatedAt,
          ttl_ms: s.ttlMs,
          poll_interval_ms: s.pollIntervalMs ?? null,
          detail: this.sealing.sealDetail(taskKey, s),
          detail_stored_at: this.now().toISOString(),
          // Recorded between two watches (the workflow writes after a watch ended, before the next): a
          // running task is due from now until the next starts; a finished one is watched no more.
          watch_due_at: TERMINAL_TASK_STATUSES.has(s.status) ? null : this.now().toISOString(),
        })
        .where('task_key', '=', taskKey)
        .execute();
      const previousMessage = this.sealing.openMessage(taskKey, current.status_message);
      if (current.status !== s.status || previousMessage !== s.statusMessage) {
        await addStatusEvent(trx, this.sealing, taskKey, s);
      }
      return true;
    });
  }

  /**
   * getTask's statement, built and compiled once: Kysely builds and compiles a query on every call, which
   * for this one (the most frequent read: every `tasks/get`) cost more than running it (SQLite, in
   * process: 27-31 µs built each time, 11.5 µs compiled once, 14 µs for the plain select before the join).
   */
  private compileTaskRead() {
    const compiled = this.db
      .selectFrom('tasks')
      // The watch hub holding the task, if any: a dead one's tasks go unpolled (task-watch.ts).
      .leftJoin('watch_hub as h', 'h.task_key', 'tasks.task_key')
      .leftJoin('watch_hub_owners as o', 'o.owner', 'h.lease_owner')
      .selectAll('tasks')
      .select(['h.lease_owner as hub_owner', 'h.lease_until as hub_lease_until'])
      .select('o.alive_until as hub_alive_until')
      .where('tasks.task_key', '=', '')
      .compile();
    // The task key is its one parameter, replaced on each read.
    if (compiled.parameters.length !== 1) throw new Error('getTask: expected one parameter');
    return compiled;
  }

  async getTask(taskKey: string): Promise<TaskRecord | undefined> {
    this.taskRead ??= this.compileTaskRead();
    const row = (await this.db.executeQuery<TaskReadRow>({ ...this.taskRead, parameters: [taskKey] }))
      .rows[0];
    if (!row) return undefined;
    const watchDueAt =
      row.watch_due_at ??
      deadHubSince(
        { owner: row.hub_owner, ownerAliveUntil: row.hub_alive_until, leaseUntil: row.hub_lease_until },
        this.now(),
      );
    const ttlMs = advertisedTtlMs(
      {
        createdAt: row.created_at,
        ttlMs: row.ttl_ms === null ? null : Number(row.ttl_ms),
        terminal: TERMINAL_TASK_STATUSES.has(row.status),
        detailStoredAt: row.detail_stored_at ?? row.last_updated_at,
      },
      this.retention,
    );
    const snapshot: TaskSnapshot = {
      status: row.status as TaskStatus,
      createdAt: row.created_at,
      lastUpdatedAt: row.last_updated_at,
      ttlMs,
      ...(row.status_message !== null && {
        statusMessage: this.sealing.openMessage(taskKey, row.status_message),
      }),
      ...(row.poll_interval_ms !== null && { pollIntervalMs: row.poll_interval_ms }),
      ...this.sealing.openDetail(taskKey, row.detail),
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
      ...(watchDueAt != null && { watchDueAt }),
      ...(Number(row.hosted ?? 0) === 1 && { hosted: true }),
      ...(row.answered_inputs != null && { answeredInputs: parseAnsweredInputs(row.answered_inputs) }),
    };
  }

  /** Input keys the task's client answered (tasks/update): tasks/get hides them without a workflow query. */
  recordAnsweredInputs(taskKey: string, keys: readonly string[]): Promise<void> {
    return recordAnsweredInputs(this.db, taskKey, keys);
  }

  async listEvents(taskKey: string): Promise<TaskEvent[]> {
    return listEvents(this.db, this.sealing, taskKey);
  }

  /** A feed of every task's status changes from now on (push notifications, status-feed.ts). */
  statusFeed(): StatusEventFeed {
    return new StatusEventFeed(this.db);
  }

  // ── the dashboard (docs/dashboard.md, task-listing.ts) ──────────────────────────────────────────

  async listProjectTasks(q: TaskListQuery): Promise<TaskSummary[]> {
    return listProjectTasks(this.db, this.sealing, q);
  }

  /** The counts per group under the list's filters: `assigned`, and `hosted` for hosted tasks only. */
  async countProjectTasks(
    project: string,
    assigned?: TaskListQuery['assigned'],
    hosted?: boolean,
  ): Promise<Record<TaskGroup, number>> {
    return countProjectTasks(this.db, project, {
      ...(assigned && { assigned }),
      ...(hosted === true && { hosted }),
    });
  }

  /** Sets (or clears, with null) a task's assignee, with a history row (task-history.ts). */
  async assign(
    taskKey: string,
    assigneeUserId: string | null,
    actor: string,
    at: string,
  ): Promise<'changed' | 'unchanged' | 'missing'> {
    return assignTask(this.db, this.lockRows, { taskKey, assigneeUserId, actor, at });
  }

  // ── retention and project deletion (docs/retention.md, task-retention.ts) ───────────────────────

  async purgePayloadsBefore(cutoffIso: string, batchSize: number, nowIso?: string): Promise<number> {
    return purgePayloadsBefore(this.db, cutoffIso, batchSize, nowIso ?? this.now().toISOString());
  }

  /** When the task's current detail was stored (the watch refreshes a running task's copy before it ages out). */
  /** A watch of the task started: it is polled again (task-watch.ts). */
  watchStarted(taskKey: string): Promise<void> {
    return watchStarted(this.db, taskKey);
  }

  /** A watch of the running task ended and the workflow is to start the next: due from now. */
  watchDue(taskKey: string): Promise<void> {
    return watchDue(this.db, taskKey, this.now().toISOString());
  }

  /** The oldest due-and-unwatched time of running tasks, per project and upstream. */
  overdueWatches(): Promise<OverdueWatch[]> {
    return overdueWatches(this.db, this.now());
  }

  async detailStoredAt(taskKey: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('tasks')
      .select(['detail_stored_at', 'last_updated_at'])
      .where('task_key', '=', taskKey)
      .executeTakeFirst();
    return row ? (row.detail_stored_at ?? row.last_updated_at) : undefined;
  }

  async purgeMetadataBefore(cutoffIso: string, batchSize: number): Promise<number> {
    return purgeMetadataBefore(this.db, cutoffIso, batchSize);
  }

  /** A project's hosted tasks not yet ended, counted up to `upTo` (the bound on them: fair-share.ts). */
  async countOpenHosted(project: string, upTo: number): Promise<number> {
    return countPendingProjectTasks(this.db, project, { hosted: true }, upTo);
  }

  async listActiveProjectTasks(project: string, afterKey: string, limit: number): Promise<ActiveTaskRef[]> {
    return listActiveProjectTasks(this.db, project, afterKey, limit);
  }

  async deleteProjectTasks(project: string, batchSize: number): Promise<number> {
    return deleteProjectTasks(this.db, project, batchSize);
  }
}
