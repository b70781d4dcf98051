/**
 * SIGTERM/SIGINT for the long-running entry points: the first signal starts a graceful stop and the
 * process exits 0 once it is done (1 if stopping failed); a second signal, or a stop that overruns its
 * grace periods, ends the process at once with 1.
 */
import type { Logger } from 'pino';

export function handleStopSignals(logger: Logger, graceMs: number, stop: () => Promise<void>): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal, graceMs }, 'shutting down');
    // HTTP requests and activities each get graceMs; past both (and some slack) something is stuck.
    setTimeout(
      () => {
        logger.error('shutdown did not finish in time: exiting');
        process.exit(1);
      },
      2 * graceMs + 10_000,
    ).unref();
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}
