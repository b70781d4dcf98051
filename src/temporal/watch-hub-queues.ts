/**
 * The watch hub's due tasks (src/temporal/watch-hub.ts): one queue per upstream, soonest due first, so
 * the hub polls the longest overdue task of an upstream next and finds each upstream's most overdue task
 * without scanning everything it holds. An entry that is no longer current (the hub dropped or replaced
 * the task, or it is being polled) is discarded when it comes up, rather than searched for and removed.
 * Also what a held task is, and when the hub polls it on after a change.
 */
import { Heap } from 'heap-js';
import type { PollCursor } from '../activities/watch-poll';
import type { HubWatchInput, WatchUpstreamTaskInput, WatchUpstreamTaskResult } from '../activities/types';
import { staleAfterMs } from '../store/tasks/task-watch';
import type { ClaimedWatch } from '../store/tasks/watch-hub';
import { CREATED_ENLISTMENT } from '../workflows/messages';

export interface Queued {
  /** The upstream (project and alias) whose queue it is in. */
  group: string;
  /** When it is due (ms since the epoch). */
  nextAt: number;
}

/** A task a hub holds (src/temporal/watch-hub.ts): what it polls, and where its polls stand. */
export interface HeldWatch extends Queued {
  row: ClaimedWatch;
  input: WatchUpstreamTaskInput;
  /** The task's trace context: its polls continue that trace. */
  trace?: Record<string, string>;
  cursor?: PollCursor;
  polling: boolean;
  /** An outcome not yet delivered (its signal failed): delivered again, not polled again. */
  outcome?: WatchUpstreamTaskResult;
  /** When that outcome was first being delivered: the task is unrecorded since then. */
  answeredAt?: string;
  /** Marked due in the store because its polls ran late (see markLate). */
  markedLate?: boolean;
  /**
   * Polled on after a change its workflow has yet to record (pollOnAfter): the mark markAnswered set
   * stands as it is, never moved later by a late poll nor cleared by catching up (the workflow's next
   * enlistment clears it).
   */
  toldUnrecorded?: boolean;
  /** The API's enlistment whose signal once found no workflow: the next such answer drops it (see deliver). */
  goneOnce?: boolean;
  /** Failed rounds in a row (a store write, the signal, the cursor's read): what the next retry waits on. */
  failures?: number;
  /** The interval the upstream last suggested (its polls' pace since); the enlisted one until it does. */
  intervalMs?: number;
}

/** The longest a held task waits to be tried again after failures of the gateway's own (a store or Temporal outage). */
export const MAX_RETRY_MS = 30_000;

/**
 * A round of `h` failed: when it is tried again. The wait doubles with each failure in a row from
 * `retryMs`, up to MAX_RETRY_MS, so an outage of the store or of Temporal does not have a hub retry
 * everything it holds every second; and a retry that asks the upstream again (no outcome kept) waits at
 * least the task's poll interval: the upstream is never polled faster because the gateway failed.
 */
export function retryAfterFailure(h: HeldWatch, retryMs: number, now = Date.now()): void {
  h.failures = (h.failures ?? 0) + 1;
  const backoff = Math.min(MAX_RETRY_MS, retryMs * 2 ** Math.min(h.failures - 1, 16));
  h.nextAt = now + (h.outcome ? backoff : Math.max(backoff, h.intervalMs ?? h.input.pollIntervalMs));
}

/**
 * Whether the hub goes on polling a task after delivering `result`, and if so prepares it to: the API's
 * enlistment of a task it created (CREATED_ENLISTMENT) is kept through a change that leaves the task
 * `working` (a new status message). Its workflow, perhaps still waiting for its first workflow task, takes
 * the latest such word, and the end is seen on time. Polled on from what the workflow was just told. Any
 * other change is the workflow's to act on.
 */
export function pollOnAfter(h: HeldWatch, result: WatchUpstreamTaskResult): boolean {
  if (h.row.generation !== CREATED_ENLISTMENT || result.kind !== 'changed') return false;
  const { observation } = result;
  if (observation.status !== 'working') return false;
  h.input = { ...h.input, knownKey: observation.key };
  h.outcome = undefined;
  h.answeredAt = undefined;
  h.markedLate = false;
  h.toldUnrecorded = true;
  h.intervalMs = observation.pollIntervalMs ?? h.input.pollIntervalMs;
  h.nextAt = Date.now() + h.intervalMs;
  return true;
}

/** A row a hub just claimed, as it holds it: due now, in its upstream's queue. */
export function heldOf(row: ClaimedWatch, now: number): HeldWatch {
  const { trace, ...input } = row.watch as HubWatchInput;
  return {
    row,
    input,
    ...(trace && { trace }),
    group: `${row.project}\u0000${row.upstream}`,
    nextAt: now,
    polling: false,
  };
}

/** Whether a held task's poll runs late enough for its status to be called unchecked (staleAfterMs). */
export function pollLate(h: Queued & { input: { pollIntervalMs?: number } }, now: number): boolean {
  return now - h.nextAt > staleAfterMs(h.input.pollIntervalMs);
}

/**
 * The held tasks whose polls now run late enough to be marked due in the store (not marked yet), and those
 * marked that no longer are. Neither is a task being polled, nor one polled with an outcome still to deliver
 * (its signal failed and is tried again) or polled on after one (pollOnAfter): its workflow has yet to
 * record that outcome, so the mark markAnswered set must stand until the workflow's next enlistment
 * clears it.
 */
export function lateness(
  held: Iterable<HeldWatch>,
  now: number,
): { late: HeldWatch[]; caughtUp: HeldWatch[] } {
  const late: HeldWatch[] = [];
  const caughtUp: HeldWatch[] = [];
  for (const h of held) {
    if (h.polling || h.outcome || h.toldUnrecorded) continue;
    const isLate = pollLate(h, now);
    if (isLate && !h.markedLate) late.push(h);
    else if (!isLate && h.markedLate) caughtUp.push(h);
  }
  return { late, caughtUp };
}

export class DueQueues<T extends Queued> {
  private readonly queues = new Map<string, Heap<T>>();

  /** `current`: whether an entry still stands for a task waiting for its poll. */
  constructor(private readonly current: (item: T) => boolean) {}

  push(item: T): void {
    let queue = this.queues.get(item.group);
    if (!queue) {
      queue = new Heap<T>((a, b) => a.nextAt - b.nextAt);
      this.queues.set(item.group, queue);
    }
    queue.push(item);
  }

  /** The upstreams with anything queued. */
  groups(): string[] {
    return [...this.queues.keys()];
  }

  /** The group's soonest-due entry if it is due by `now`, taken off its queue. */
  take(group: string, now: number): T | undefined {
    const queue = this.queues.get(group);
    if (!queue) return undefined;
    const first = this.first(queue);
    if (!first) {
      this.queues.delete(group);
      return undefined;
    }
    return first.nextAt > now ? undefined : queue.pop();
  }

  /** Each group's soonest-due entry (left queued). */
  oldest(): T[] {
    return [...this.queues.values()].flatMap((queue) => this.first(queue) ?? []);
  }

  clear(): void {
    this.queues.clear();
  }

  private first(queue: Heap<T>): T | undefined {
    let item = queue.peek();
    for (; item && !this.current(item); item = queue.peek()) queue.pop();
    return item;
  }
}
