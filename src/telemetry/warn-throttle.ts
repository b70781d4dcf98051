/**
 * One warning per key and window for a failure that can repeat for many tasks at once: a store or
 * Temporal outage fails every task a watch hub holds, a dead upstream every poll of its tasks. The first
 * failure of a key is logged as it comes; the ones in the `windowMs` after it are counted and reported
 * (`alsoFailed`) with the next warning logged for that key. Counters in `/metrics` keep the full count.
 */
import type { Logger } from 'pino';

/**
 * Keys remembered at most (one per upstream in practice); past it, keys whose window is over are dropped,
 * and if none is, the oldest key (a warning it held back is then not reported).
 */
const MAX_KEYS = 1000;

export class WarnThrottle {
  private readonly keys = new Map<string, { until: number; suppressed: number }>();

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
      return;
    }
    const alsoFailed = seen?.suppressed ?? 0;
    this.logger.warn(alsoFailed > 0 ? { ...fields, alsoFailed } : fields, message);
    if (!seen && this.keys.size >= MAX_KEYS) this.prune(now);
    this.keys.set(key, { until: now + this.windowMs, suppressed: 0 });
  }

  private prune(now: number): void {
    for (const [key, seen] of this.keys) if (now >= seen.until) this.keys.delete(key);
    const oldest = this.keys.size >= MAX_KEYS ? this.keys.keys().next() : undefined;
    if (oldest && !oldest.done) this.keys.delete(oldest.value);
  }
}
