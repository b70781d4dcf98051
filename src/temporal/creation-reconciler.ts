/**
 * The creation reconciler (docs/decisions.md, "The first call from the API"), run by the worker role
 * every `tasks.reconcileEveryMs`:
 *
 * - A task recorded by the API (claim `recorded`) whose workflow the API did not start (it died between
 *   the record and the start, or Temporal did not answer) is started here, with the input the API
 *   recorded with the task. Idempotent: the workflow id is the task's, a workflow already started (by the
 *   API, by another worker's reconciler; running or closed) counts as started, and a closed one is never
 *   started again (REJECT_DUPLICATE, task-engine.ts).
 * - A first call claimed `sending` for longer than `tasks.firstCallLostAfterMs` with no recorded answer
 *   is declared `lost`: whoever sent it died with its answer. It is never sent again; a task recorded
 *   for it, if any, fails with an error that says so. The worker path settles its own claims once the
 *   outcome is known (activities/first-call.ts); one it could not settle (the write failed, or its
 *   worker died right after recording the answer) is marked `done` here instead when its answer is
 *   recorded.
 *
 * Every change is a conditional move of the claim (store/tasks/first-calls.ts), so several workers running
 * this at once, or a worker and the API, never act twice on one claim.
 */
import type { Logger } from 'pino';
import type { TaskSnapshot } from '../protocol';
import { TERMINAL_TASK_STATUSES } from '../protocol';
import type { FirstCalls } from '../store/tasks/first-calls';
import type { PayloadStore } from '../store/tasks/payload-store';
import type { TaskStore } from '../store/tasks/task-store';
import { firstCallsLost, taskStartsReconciled } from '../telemetry/metrics';
import type { TaskWorkflowInput } from '../workflows/messages';
import type { TaskEngine } from './task-engine';
import { errorText } from '../telemetry/log-context';

export interface CreationReconcilerDeps {
  firstCalls: FirstCalls;
  payloads: PayloadStore;
  store: TaskStore;
  /** Starts a recorded task's workflow (TaskEngine.startCreated), connecting to Temporal on first use. */
  startCreated: (input: TaskWorkflowInput) => ReturnType<TaskEngine['startCreated']>;
  logger: Logger;
  everyMs: number;
  lostAfterMs: number;
  /** How long a recorded task is left to the API's own start before the reconciler starts it. */
  graceMs: number;
  /** Claims handled per kind and round. */
  batchSize?: number;
}

/** Batches of stale `sending` claims one round may take (see declareLost). */
const MAX_BATCHES = 20;

export interface ReconcileRound {
  started: number;
  lost: number;
}

export class CreationReconciler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;

  constructor(private readonly deps: CreationReconcilerDeps) {}

  /** Runs a round every `everyMs` until stopped (a round never overlaps the previous one). */
  start(): void {
    const next = () => {
      if (this.stopped) return;
      this.timer = setTimeout(() => {
        this.running = this.runOnce()
          .catch((err: unknown) =>
            this.deps.logger.warn({ err: errorText(err) }, 'creation reconciler round failed'),
          )
          .finally(next);
      }, this.deps.everyMs);
      this.timer.unref();
    };
    next();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  async runOnce(now = Date.now()): Promise<ReconcileRound> {
    const started = await this.startRecorded(now);
    const lost = await this.declareLost(now);
    return { started, lost };
  }

  private async startRecorded(now: number): Promise<number> {
    const { firstCalls, payloads } = this.deps;
    const keys = await firstCalls.inStateSince(
      'recorded',
      new Date(now - this.deps.graceMs).toISOString(),
      this.deps.batchSize ?? 100,
    );
    let started = 0;
    for (const taskKey of keys) {
      try {
        const input = await payloads.firstOf<TaskWorkflowInput>(taskKey, 'start_input');
        if (!input) {
          // Only past the payload retention: the task cannot be watched; say so rather than keep it `working`.
          if (await firstCalls.move(taskKey, 'recorded', 'lost')) {
            await this.failTask(
              taskKey,
              'The task was recorded but its workflow could not be started (its start input is no longer stored)',
            );
          }
          continue;
        }
        if ((await this.deps.startCreated(input)) === 'started') {
          started++;
          taskStartsReconciled.inc();
          this.deps.logger.info(
            { project: input.projectSlug },
            'recorded task started by the creation reconciler',
          );
        }
        await firstCalls.move(taskKey, 'recorded', 'started');
      } catch (err) {
        // One claim's trouble (Temporal away, a payload that no longer opens) does not hold up the others:
        // it goes to the back of the line (its time moved to now), so claims that fail at every round
        // never fill the batch that the oldest claims take, and the others behind them are started.
        this.deps.logger.warn(
          { err: errorText(err) },
          'recorded task not started; a later round tries again',
        );
        await firstCalls.move(taskKey, 'recorded', 'recorded').catch(() => undefined);
      }
    }
    return started;
  }

  /**
   * Stale `sending` claims, a batch at a time: a round takes up to MAX_BATCHES batches, to catch up with
   * a backlog (claims of workers that could not settle them, or left by versions that did not).
   */
  private async declareLost(now: number): Promise<number> {
    const batchSize = this.deps.batchSize ?? 100;
    let lost = 0;
    for (let batch = 0; batch < MAX_BATCHES; batch++) {
      const { lost: more, seen } = await this.declareLostBatch(now, batchSize);
      lost += more;
      if (seen < batchSize) break;
    }
    return lost;
  }

  private async declareLostBatch(now: number, batchSize: number): Promise<{ lost: number; seen: number }> {
    const { firstCalls, payloads } = this.deps;
    const keys = await firstCalls.inStateSince(
      'sending',
      new Date(now - this.deps.lostAfterMs).toISOString(),
      batchSize,
    );
    let lost = 0;
    for (const taskKey of keys) {
      // A worker-path run recorded the answer as a payload but could not settle its claim.
      if (await payloads.hasAnyOf(taskKey, ['upstream_task_id', 'result', 'error'])) {
        await firstCalls.move(taskKey, 'sending', 'done');
        continue;
      }
      if (!(await firstCalls.move(taskKey, 'sending', 'lost'))) continue;
      lost++;
      firstCallsLost.inc();
      this.deps.logger.warn('first call declared lost: its sender stopped before recording the answer');
      await this.failTask(
        taskKey,
        'The call to the upstream was interrupted after it may have been sent, and its answer was lost; it was not repeated',
      );
    }
    return { lost, seen: keys.length };
  }

  /** Fails the task of a claim, if one is recorded and not terminal yet. */
  private async failTask(taskKey: string, message: string): Promise<void> {
    const task = await this.deps.store.getTask(taskKey);
    if (!task || TERMINAL_TASK_STATUSES.has(task.snapshot.status)) return;
    const failed: TaskSnapshot = {
      status: 'failed',
      createdAt: task.snapshot.createdAt,
      lastUpdatedAt: new Date().toISOString(),
      ttlMs: task.snapshot.ttlMs,
      statusMessage: message,
      error: { code: -32603, message },
    };
    await this.deps.store.recordSnapshot(taskKey, failed);
  }
}
