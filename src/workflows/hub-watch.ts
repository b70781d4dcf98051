/**
 * A task workflow's watch in hub mode (`tasks.watchBy: hub`; docs/decisions.md, "The watch hub"). Instead
 * of running a watch activity, the workflow enlists its task with the workers' watch hub (a local
 * activity writing the task's row, due now) and waits for the hub's signal, which comes only when the
 * task changed, so history does not grow with polls. Each enlistment has a generation (`<runId>/<n>`);
 * a signal answering an older one (a hub that had not yet noticed a re-enlistment, a run before
 * continue-as-new) is ignored, except the API's enlistment of a task it created (CREATED_ENLISTMENT),
 * whose word the first run takes until it enlists the task itself; a first run that started before that
 * row could be polled adopts it as its first enlistment (see watch). Input to forward interrupts the wait;
 * after `maxWatchMs` (`tasks.hub.reenlistAfterMs`) without a word the workflow enlists again (a safety
 * net: the row is due at once and any hub takes it). Workflow code: deterministic, activities by type
 * only.
 */
import {
  condition,
  patched,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { TaskActivities } from '../activities';
import type { WatchUpstreamTaskInput, WatchUpstreamTaskResult } from '../activities/types';
import { CREATED_ENLISTMENT, watchObservedSignal } from './messages';
import { statusDetails } from './published-status';
import type { TaskState } from './task-state';

const { enlistWatch, delistWatch } = proxyLocalActivities<TaskActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200ms', maximumInterval: '10s' },
});

/**
 * When the input carries none (never expected: every hub-mode input carries `tasks.hub.reenlistAfterMs` in
 * its `maxWatchMs`); kept at the 5 minutes such inputs ran with, so nothing recorded replays differently.
 */
const DEFAULT_MAX_WATCH_MS = 300_000;

/**
 * Runs from before this skipped no delisting: they replay with the `delistWatch` they recorded after the
 * hub's last word.
 */
const HUB_REMOVES_ANSWERED_ROW = 'hub-removes-answered-row';

/**
 * The run the API started: the first of its chain, or a reset of it (a reset replays the first run's
 * history under a new run id and keeps `originalExecutionRunId`; a continued run has its own). A reset
 * must decide as the first run did, or its replay would enlist where the history has no enlistment.
 */
function startedByTheApi(): boolean {
  const { firstExecutionRunId, originalExecutionRunId } = workflowInfo();
  return originalExecutionRunId === firstExecutionRunId;
}

export class HubWatch {
  private generation = 0;
  private token = '';
  private observed: WatchUpstreamTaskResult | undefined;
  /** The last enlistment ended with the hub's word: that hub removes the row itself (see end). */
  private answered = false;

  /**
   * @param adoptBefore `TaskWorkflowInput.createdEnlistment.adoptBefore`: the API's row may stand for this
   *   run's first enlistment if the run started before it.
   */
  constructor(
    private readonly maxWatchMs = DEFAULT_MAX_WATCH_MS,
    private readonly adoptBefore?: string,
  ) {
    setHandler(watchObservedSignal, ({ generation, result }) => {
      // The hub goes on polling the API's enlistment through changes that leave the task working: the
      // latest word is the one that counts.
      if (generation === CREATED_ENLISTMENT) {
        if (this.takesCreated()) this.observed = result;
      } else if (generation === this.token && this.observed === undefined) this.observed = result;
    });
  }

  /**
   * The API's enlistment (CREATED_ENLISTMENT) describes the task as the first run begins it: its word
   * counts until this run enlists the task itself (which replaces that row) or, when this run adopted the
   * row as its first enlistment, until that enlistment is over; never in a continued run. Histories
   * from before the API enlisted hold no such signal, so they replay unchanged.
   */
  private takesCreated(): boolean {
    if (!startedByTheApi()) return false;
    return this.generation === 0 || this.token === CREATED_ENLISTMENT;
  }

  /**
   * The first enlistment may be the API's row (instead of a local activity writing the same row again,
   * a claim, and a poll at once of a task the upstream just created) when the row was written for it and
   * this run existed before any hub could poll the row: a hub's word for it then never finds the workflow
   * missing (and drops the row). A run started after that (by the creation reconciler, the API's start
   * having failed) enlists the task itself; one the reconciler starts before the row falls due (an
   * interval longer than its grace, `tasks.startTimeoutMs`) adopts it, just as safely. The start is when
   * Temporal accepted it (`startTime`, from the started event: deterministic), not when a worker first ran
   * it (`runStartTime`, the first workflow task's time: minutes later under a burst of creations, when
   * adopting saves the most). Runs of inputs from before the API wrote `createdEnlistment` never adopt,
   * so they replay unchanged.
   */
  private adoptsCreated(): boolean {
    if (this.generation !== 1 || this.adoptBefore === undefined || !startedByTheApi()) return false;
    return workflowInfo().startTime.getTime() < Date.parse(this.adoptBefore);
  }

  /** One enlistment: the hub's observation, or undefined (input to forward, or time to enlist again). */
  async watch(state: TaskState, input: WatchUpstreamTaskInput): Promise<WatchUpstreamTaskResult | undefined> {
    this.generation++;
    // The hub answered the API's enlistment before this run got to its first watch: that is this watch.
    if (this.generation === 1 && this.observed !== undefined) return this.settle();
    this.observed = undefined;
    if (this.adoptsCreated()) {
      this.token = CREATED_ENLISTMENT;
    } else {
      this.token = `${workflowInfo().runId}/${this.generation}`;
      await enlistWatch({ ...input, workflowId: workflowInfo().workflowId, generation: this.token });
    }
    // Polling stays visible in the Temporal UI: who polls, and how often.
    setCurrentDetails(
      `${statusDetails(state.present().status)}\n\nWatched by the workers' watch hub: the upstream is polled every ${input.pollIntervalMs} ms; this workflow hears only of changes (signal \`watchObserved\`).`,
    );
    await condition(() => this.observed !== undefined || state.hasWork, this.maxWatchMs);
    return this.settle();
  }

  /** The enlistment is over: its word (if any) goes to the caller; a later signal for it is ignored. */
  private settle(): WatchUpstreamTaskResult | undefined {
    const observed = this.observed;
    this.answered = observed !== undefined;
    this.observed = undefined;
    this.token = '';
    return observed;
  }

  /**
   * The task ended: its row goes. When the hub's word ended it, that hub removes the row after its signal
   * (or, had it died first, the hub that takes the row over finds the workflow closed and removes it):
   * no local activity, one fewer step for every task that ends. Otherwise (input forwarded, the safety
   * net's time) the row is delisted here.
   */
  async end(taskKey: string): Promise<void> {
    if (this.answered && patched(HUB_REMOVES_ANSWERED_ROW)) return;
    await delistWatch({ taskKey });
  }
}
