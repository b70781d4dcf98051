/**
 * Writes the latest of a stream of values at most once per interval, the last one included: a value that
 * comes too soon after the previous write waits for the interval's end, and a newer one replaces it.
 * (Dropping it instead, as a plain throttle does, leaves a task showing an older progress for as long as
 * the upstream stays quiet after its last report.) At most one write is under way: what comes meanwhile
 * waits for it to end, so a slow store never builds a queue of old values.
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
  let writing: Promise<void> | undefined;
  let stopped = false;
  let quietRuns = 0;
  const held = () => stopped || quietRuns > 0;
  const schedule = () => {
    if (timer || writing || !waiting) return;
    const wait = last + everyMs - Date.now();
    if (wait <= 0) flush();
    else timer = setTimeout(flush, wait);
  };
  const flush = () => {
    timer = undefined;
    if (!waiting || writing) return;
    const { value } = waiting;
    waiting = undefined;
    last = Date.now();
    writing = write(value)
      .catch(() => undefined)
      .finally(() => {
        writing = undefined;
        if (!held()) schedule();
      });
  };
  const settle = async () => {
    clearTimeout(timer);
    timer = undefined;
    waiting = undefined;
    await writing;
  };
  return {
    offer(value) {
      if (held()) return;
      waiting = { value };
      schedule();
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
