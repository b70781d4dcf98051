/**
 * One warning per key and window for a failure that can repeat for many tasks at once: a store or
 * Temporal outage fails every task a watch hub holds, a dead upstream every poll of its tasks. The first
 * failure of a key is logged as it comes; the ones in the `windowMs` after it are counted, and when the
 * window ends the last of them is logged with that count (`alsoFailed`), which opens the next window: a
 * failure that goes on is logged once per window, and the count of one that stopped is not lost. Counters
 * in `/metrics` keep the full count.
 */
import { AsyncResource } from 'node:async_hooks';
import type { Logger } from 'pino';

/**
 * Keys remembered at most (one per upstream in practice); past it, keys whose window is over are dropped,
 * and if none is, the oldest key (a warning it held back is then not reported).
 */
const MAX_KEYS = 1000;

interface Window {
  until: number;
  suppressed: number;
  /** The last failure held back, logged with the count when the window ends. */
  last?: { fields: Record<string, unknown>; message: string };
}

export class WarnThrottle {
  private readonly keys = new Map<string, Window>();
  /** The report of held-back failures, due when the earliest window holding some ends. */
  private report: { at: number; timer: NodeJS.Timeout } | undefined;
  /**
   * The context the report's timer is made in: the throttle's own, not that of the failure that happened
   * to schedule it (a timer keeps its creator's context, and the log's trace ids come from it).
   */
  private readonly scope = new AsyncResource('WarnThrottle');

  constructor(
    private readonly logger: Logger,
    private readonly windowMs = 10_000,
  ) {}

  /** Logs `message` unless `key` was logged within the window (then counts it). */
  warn(key: string, fields: Record<string, unknown>, message: string): void {
    const now = Date.now();
    const seen = this.keys.get(key);
    if (seen && now < seen.until) {
      seen.suppressed++;
      seen.last = { fields, message };
      this.reportAt(seen.until);
      return;
    }
    // A window that ended before its report ran: its count goes with this warning.
    const alsoFailed = seen?.suppressed ?? 0;
    this.logger.warn(alsoFailed > 0 ? { ...fields, alsoFailed } : fields, message);
    if (!seen && this.keys.size >= MAX_KEYS) this.prune(now);
    this.keys.set(key, { until: now + this.windowMs, suppressed: 0 });
  }

  private reportAt(at: number): void {
    if (this.report && this.report.at <= at) return;
    if (this.report) clearTimeout(this.report.timer);
    // Unref'd: a pending report never keeps the process alive.
    const timer = this.scope.runInAsyncScope(() =>
      setTimeout(() => this.reportEnded(), Math.max(0, at - Date.now())).unref(),
    );
    this.report = { at, timer };
  }

  /** Logs the held-back failures of every window that ended, each opening a new window for its key. */
  private reportEnded(): void {
    this.report = undefined;
    const now = Date.now();
    let next = Infinity;
    try {
      for (const seen of this.keys.values()) {
        if (seen.suppressed === 0 || !seen.last) continue;
        if (now < seen.until) {
          next = Math.min(next, seen.until);
          continue;
        }
        const { fields, message } = seen.last;
        const alsoFailed = seen.suppressed;
        seen.until = now + this.windowMs;
        seen.suppressed = 0;
        seen.last = undefined;
        this.logger.warn({ ...fields, alsoFailed }, message);
      }
    } finally {
      // A logger that throws (in a timer: an uncaught exception) still leaves the other windows reported.
      if (next < Infinity) this.reportAt(next);
    }
  }

  private prune(now: number): void {
    for (const [key, seen] of this.keys)
      if (now >= seen.until && seen.suppressed === 0) this.keys.delete(key);
    const oldest = this.keys.size >= MAX_KEYS ? this.keys.keys().next() : undefined;
    if (oldest && !oldest.done) this.keys.delete(oldest.value);
  }
}
