/**
 * In-memory task store of the example upstream. It owns every timer it starts, so that `dispose()` can
 * stop all pending work and a test process exits without waiting for a 60 s `slow_compute`.
 */
import { randomBytes } from 'node:crypto';
import type { InputRequests, InputResponses, JsonRpcErrorObject, TaskStatus } from '../../src/protocol';
import { TERMINAL_TASK_STATUSES } from '../../src/protocol';

/** A tool result stored on a completed task (a CallToolResult, `isError` included). */
export type StoredResult = Record<string, unknown>;

/** Called once every outstanding input request of a task has an answer. */
export type InputsAnsweredHandler = (answers: InputResponses) => void;

export interface TaskRecord {
  readonly taskId: string;
  readonly toolName: string;
  status: TaskStatus;
  statusMessage?: string;
  readonly createdAt: string;
  lastUpdatedAt: string;
  /** Epoch ms of creation; `ttlMs` counts from here (spec: lifetime from `createdAt`). */
  readonly createdMs: number;
  readonly ttlMs: number;
  /** The interval suggested to pollers: the server's, or the task's own (slow_compute's `pollIntervalMs`). */
  pollIntervalMs: number;
  /** The ttlMs announced to clients when it differs from how long the store keeps the task. */
  advertisedTtlMs?: number;
  /** A task that ignores tasks/cancel and finishes anyway (cancellation is cooperative). */
  ignoreCancel?: boolean;
  /** Extra top-level fields and `_meta` the task carries on every answer (extension data). */
  extra?: Record<string, unknown>;
  result?: StoredResult;
  error?: JsonRpcErrorObject;
  /** Outstanding input requests, keyed by server-chosen names; answered keys are removed. */
  readonly pending: Map<string, InputRequests[string]>;
  /** Answers collected so far for the current round of input requests. */
  readonly answers: InputResponses;
  onInputsAnswered?: InputsAnsweredHandler;
  readonly timers: Set<NodeJS.Timeout>;
}

export interface TaskStoreOptions {
  ttlMs: number;
  pollIntervalMs: number;
}

/** Task ids are bearer-token-like: 128 random bits, with a prefix that makes them easy to spot in tests. */
export function newTaskId(): string {
  return `upstream-task-${randomBytes(16).toString('hex')}`;
}

export class TaskStore {
  private readonly tasks = new Map<string, TaskRecord>();

  constructor(private readonly options: TaskStoreOptions) {}

  /** Creates a `working` task. It is readable by `get` before this returns (strong consistency). */
  create(toolName: string, now = Date.now(), ttlMs = this.options.ttlMs): TaskRecord {
    this.purgeExpired(now);
    const iso = new Date(now).toISOString();
    const task: TaskRecord = {
      taskId: newTaskId(),
      toolName,
      status: 'working',
      createdAt: iso,
      lastUpdatedAt: iso,
      createdMs: now,
      ttlMs,
      pollIntervalMs: this.options.pollIntervalMs,
      pending: new Map(),
      answers: {},
      timers: new Set(),
    };
    this.tasks.set(task.taskId, task);
    return task;
  }

  /** The task, or undefined when unknown or past its `ttlMs` (expired tasks are dropped on access). */
  get(taskId: string, now = Date.now()): TaskRecord | undefined {
    const task = this.tasks.get(taskId);
    if (task && now >= task.createdMs + task.ttlMs) {
      this.drop(task);
      return undefined;
    }
    return task;
  }

  /** Runs `fn` after `ms` unless the task reaches a terminal state first. Timers are unref'd. */
  schedule(task: TaskRecord, ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      task.timers.delete(timer);
      if (!isTerminal(task)) fn();
    }, ms);
    timer.unref();
    task.timers.add(timer);
  }

  complete(task: TaskRecord, result: StoredResult, statusMessage?: string): void {
    if (isTerminal(task)) return;
    task.result = result;
    this.settle(task, 'completed', statusMessage);
  }

  fail(task: TaskRecord, error: JsonRpcErrorObject, statusMessage: string): void {
    if (isTerminal(task)) return;
    task.error = error;
    this.settle(task, 'failed', statusMessage);
  }

  /** Cooperative cancel: a running task stops at once; a terminal task is left as it is (idempotent). */
  cancel(task: TaskRecord): void {
    if (isTerminal(task) || task.ignoreCancel) return;
    this.settle(task, 'cancelled', 'Cancelled by client');
  }

  /** Parks the task in `input_required` with these outstanding requests. */
  requestInput(
    task: TaskRecord,
    requests: InputRequests,
    statusMessage: string,
    onInputsAnswered: InputsAnsweredHandler,
  ): void {
    if (isTerminal(task)) return;
    for (const [key, request] of Object.entries(requests)) task.pending.set(key, request);
    task.onInputsAnswered = onInputsAnswered;
    this.transition(task, 'input_required', statusMessage);
  }

  /**
   * Applies a `tasks/update`. Unknown keys, keys already answered and answers to terminal tasks are
   * ignored (spec SHOULD). Applied synchronously, so a `tasks/get` right after the ack already shows only
   * the keys still pending. Once the last key is answered the task goes back to `working` and the
   * tool's continuation runs.
   */
  answer(task: TaskRecord, responses: InputResponses): void {
    if (task.status !== 'input_required') return;
    for (const [key, response] of Object.entries(responses)) {
      if (!task.pending.has(key) || !isElicitResult(response)) continue;
      task.pending.delete(key);
      task.answers[key] = response;
    }
    if (task.pending.size > 0) {
      this.touch(task);
      return;
    }
    const answers = { ...task.answers };
    const handler = task.onInputsAnswered;
    for (const key of Object.keys(task.answers)) delete task.answers[key];
    task.onInputsAnswered = undefined;
    this.transition(task, 'working', 'Input received');
    handler?.(answers);
  }

  /** Stops every timer; used by the server's close(). */
  dispose(): void {
    for (const task of this.tasks.values()) this.clearTimers(task);
    this.tasks.clear();
  }

  /** A new status message on a task that keeps its status (progress). */
  say(task: TaskRecord, statusMessage: string): void {
    this.transition(task, task.status, statusMessage);
  }

  private settle(task: TaskRecord, status: TaskStatus, statusMessage?: string): void {
    this.clearTimers(task);
    task.pending.clear();
    task.onInputsAnswered = undefined;
    this.transition(task, status, statusMessage);
  }

  private transition(task: TaskRecord, status: TaskStatus, statusMessage?: string): void {
    task.status = status;
    if (statusMessage === undefined) delete task.statusMessage;
    else task.statusMessage = statusMessage;
    this.touch(task);
  }

  private touch(task: TaskRecord): void {
    task.lastUpdatedAt = new Date().toISOString();
  }

  private clearTimers(task: TaskRecord): void {
    for (const timer of task.timers) clearTimeout(timer);
    task.timers.clear();
  }

  /** Forgets a task as if it had been purged: tasks/get answers -32602 from now on. */
  forget(task: TaskRecord): void {
    this.drop(task);
  }

  private drop(task: TaskRecord): void {
    this.clearTimers(task);
    this.tasks.delete(task.taskId);
  }

  private purgeExpired(now: number): void {
    for (const task of this.tasks.values()) {
      if (now >= task.createdMs + task.ttlMs) this.drop(task);
    }
  }
}

export function isTerminal(task: TaskRecord): boolean {
  return TERMINAL_TASK_STATUSES.has(task.status);
}

/** An answer we can act on: an ElicitResult with a known action. Anything else leaves the key pending. */
function isElicitResult(value: Record<string, unknown>): boolean {
  return value.action === 'accept' || value.action === 'decline' || value.action === 'cancel';
}
