/**
 * Writes the latest of a stream of values at most once per interval, the last one included: a value that
 * comes too soon after the previous write waits for the interval's end, and a newer one replaces it.
 * (Dropping it instead, as a plain throttle does, leaves a task showing an older progress for as long as
 * the upstream stays quiet after its last report.) Writes never overlap.
 */
export interface LatestEvery<T> {
  offer(value: T): void;
  /**
   * Runs `during` with nothing written: what waits is dropped, a write under way ends first, and values
   * offered meanwhile are ignored (the task says something else then, e.g. that it asks for input).
   */
  quiet<R>(during: () => Promise<R>): Promise<R>;
  /** Drops what waits; resolves once a write under way has ended, so none lands after what comes next. */
  stop(): Promise<void>;
}

/** `write` handles its own failures (a rejection is swallowed here so later writes still run). */
export function latestEvery<T>(everyMs: number, write: (value: T) => Promise<void>): LatestEvery<T> {
  let last = -Infinity;
  let waiting: { value: T } | undefined;
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();
  let stopped = false;
  let quietRuns = 0;
  const flush = () => {
    timer = undefined;
    if (!waiting) return;
    const { value } = waiting;
    waiting = undefined;
    last = Date.now();
    writing = writing.then(() => write(value)).catch(() => undefined);
  };
  const settle = async () => {
    clearTimeout(timer);
    timer = undefined;
    waiting = undefined;
    await writing;
  };
  return {
    offer(value) {
      if (stopped || quietRuns > 0) return;
      waiting = { value };
      if (timer) return;
      const wait = last + everyMs - Date.now();
      if (wait <= 0) flush();
      else timer = setTimeout(flush, wait);
    },
    async quiet(during) {
      quietRuns += 1;
      try {
        await settle();
        return await during();
      } finally {
        quietRuns -= 1;
      }
    },
    async stop() {
      stopped = true;
      await settle();
    },
  };
}
