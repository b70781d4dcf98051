/** How activities wait: cancellable, and leaving nothing behind once settled (see cancellableSleep). */
/**
 * Waits `ms`, or rejects with the signal's reason (for an activity's `cancellationSignal`, its
 * `CancelledFailure`, as `Context.sleep` rejects) as soon as the signal aborts. Unlike `Context.sleep`,
 * which chains a reaction onto the activity's `cancelled` promise that stays until the activity ends
 * (one per sleep: a watch sleeping in one-second steps held one per second of its life), this one
 * leaves nothing behind once it settles: its timer is cleared and its listener removed either way.
 */
export function cancellableSleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new Error('The sleep was cancelled');
}
