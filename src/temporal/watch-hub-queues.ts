/**
 * The watch hub's due tasks (src/temporal/watch-hub.ts): one queue per upstream, soonest due first, so
 * the hub polls the longest overdue task of an upstream next and finds each upstream's most overdue task
 * without scanning everything it holds. An entry that is no longer current (the hub dropped or replaced
 * the task, or it is being polled) is discarded when it comes up, rather than searched for and removed.
 */
import { Heap } from 'heap-js';
import type { PollCursor } from '../activities/watch-poll';
import type { WatchUpstreamTaskInput, WatchUpstreamTaskResult } from '../activities/types';
import type { ClaimedWatch } from '../store/tasks/watch-hub';

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
  /** Marked due in the store because its polls ran late (see markLate). */
  markedLate?: boolean;
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
