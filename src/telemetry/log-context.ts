/**
 * What every log line about a request says: its request id, project and task (the task *key*, never the
 * id, which is a secret), and the trace it belongs to. The endpoint opens the context for a request; code
 * below it adds to it; pino's mixin writes it on every line logged while the request runs, with no
 * logger threaded through the call chain.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { trace } from '@opentelemetry/api';

export interface LogContext {
  requestId?: string;
  project?: string;
  taskKey?: string;
}

const storage = new AsyncLocalStorage<LogContext>();

export function withLogContext<T>(context: LogContext, work: () => T): T {
  return storage.run({ ...storage.getStore(), ...context }, work);
}

/** Adds to the current request's context (a task key once it is known). */
export function addLogContext(more: LogContext): void {
  const current = storage.getStore();
  if (current) Object.assign(current, more);
}

/** pino `mixin`: the request's context and the active trace, on every line. */
export function logMixin(): Record<string, unknown> {
  const context = storage.getStore();
  const span = trace.getActiveSpan()?.spanContext();
  return {
    ...context,
    ...(span && { traceId: span.traceId, spanId: span.spanId }),
  };
}

/** An error's name and message for a log line (never its data: payloads and ids stay out of logs). */
export function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
