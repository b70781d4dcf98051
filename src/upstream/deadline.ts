/**
 * An ordinary call's total deadline: an AbortSignal that aborts when the time is up (or when the caller's
 * own signal does), and a race that fails the call at that moment even if some step of it does not
 * notice the abort. `restart` gives the call its whole time again (progress, client.ts).
 */
export class CallDeadline {
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private fail: ((err: Error) => void) | undefined;
  private readonly lapsed: Promise<never>;
  private expiredWith: Error | undefined;
  private readonly unlink: () => void;

  constructor(
    private readonly ms: number,
    private readonly makeError: () => Error,
    outer?: AbortSignal,
  ) {
    this.signal = this.controller.signal;
    this.lapsed = new Promise<never>((_, reject) => (this.fail = reject));
    this.lapsed.catch(() => {}); // observed by race(); never an unhandled rejection
    // Linked by hand: AbortSignal.any keeps every dependent of a long-lived signal (a watch activity's).
    const forward = () => this.controller.abort(outer?.reason);
    if (outer?.aborted) forward();
    else outer?.addEventListener('abort', forward, { once: true });
    this.unlink = () => outer?.removeEventListener('abort', forward);
    this.restart();
  }

  get expired(): boolean {
    return this.expiredWith !== undefined;
  }

  /** The error the deadline failed the call with (set once it expired). */
  get error(): Error {
    return this.expiredWith ?? this.makeError();
  }

  restart(): void {
    if (this.expired) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.expiredWith = this.makeError();
      this.controller.abort(this.expiredWith);
      this.fail?.(this.expiredWith);
    }, this.ms);
  }

  /** `work`, or the deadline's error the moment it expires (`work` is then aborted through `signal`). */
  race<T>(work: Promise<T>): Promise<T> {
    work.catch(() => {}); // after the deadline, its own failure is nobody's
    return Promise.race([work, this.lapsed]);
  }

  clear(): void {
    clearTimeout(this.timer);
    this.unlink();
  }
}
