/**
 * The task store's vocabulary: what a task record, a list row, a list query and a history event look
 * like, and the key a task is stored under. Shared by the store's modules and by their callers.
 */
import { createHash } from 'node:crypto';
import type { TaskSnapshot, TaskStatus } from '../../protocol';

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
  /** A task the gateway hosts: an ordinary tool call it runs as its own durable task (docs/hosted-tasks.md). */
  hosted?: boolean;
  /**
   * When its first poll is due, if not at once: a task the API enlists with the watch hub as it records
   * it is polled one interval later, and is not late (watch lag, tasks/get's stale mark) before then.
   */
  firstPollDueAt?: string;
}

export interface TaskRecord extends Omit<NewTask, 'snapshot'> {
  snapshot: TaskSnapshot;
  /** Set when payload retention removed the task's payload (result, error, input requests, metadata). */
  payloadExpired?: true;
  /** The dashboard's human assignee (a user id); assignment grants nothing (docs/dashboard.md). */
  assigneeUserId?: string;
  /**
   * Since when the task's upstream is due for a poll no watch is making: its mark, or the end of the
   * lease of a dead hub that holds it (store/tasks/task-watch.ts).
   */
  watchDueAt?: string;
  /** Hashes of the input keys its client answered (store/tasks/answered-inputs.ts); absent while none. */
  answeredInputs?: string[];
}

/** The dashboard's task groups: `pending` is `working` + `input_required`. */
export const TASK_GROUPS = ['all', 'pending', 'completed', 'failed', 'cancelled'] as const;
export type TaskGroup = (typeof TASK_GROUPS)[number];

export interface TaskListQuery {
  /** Project id. */
  project: string;
  group: TaskGroup;
  /** Only the tasks of this caller (2025-era `tasks/list`). */
  caller?: Caller;
  /** Only tasks with a human assignee (`any`), or assigned to this user id. */
  assigned?: { kind: 'any' } | { kind: 'user'; userId: string };
  /** Only the tasks the gateway hosts (docs/hosted-tasks.md). */
  hosted?: boolean;
  /** Position after which the page starts (newest first): the last row of the previous page. */
  after?: { createdAt: string; taskKey: string };
  limit: number;
}

/** The filters of the dashboard's task list that its group counts share. */
export type TaskFilters = Pick<TaskListQuery, 'assigned' | 'hosted'>;

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
  /** Set for a task the gateway hosts (docs/hosted-tasks.md). */
  hosted?: true;
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

/** The store key of a task id. The raw id is a bearer-like secret and is never persisted. */
export function taskKeyOf(taskId: string): string {
  return createHash('sha256').update(taskId, 'utf8').digest('hex');
}
