/**
 * A task's watch hub row, from what its watch polls with: written by the workflow's enlistment (the
 * `enlistWatch` local activity) and by the API for a task it created (src/temporal/first-call.ts).
 */
import type { WatchEnlistment } from '../store/tasks/watch-hub';
import { activeTraceCarrier } from '../telemetry/mcp-spans';
import type { EnlistWatchInput, HubWatchInput } from './types';

export function watchEnlistmentOf(input: EnlistWatchInput): WatchEnlistment {
  const { workflowId, generation, ...rest } = input;
  // The hub's polls continue the task's trace (the enlistment runs in it); none when not tracing.
  // Only the trace's identity is stored: baggage is the client's data, and the row is not encrypted.
  const { traceparent, tracestate } = activeTraceCarrier();
  const trace = { ...(traceparent && { traceparent }), ...(tracestate && { tracestate }) };
  const watch: HubWatchInput = { ...rest, ...(traceparent && { trace }) };
  return {
    taskKey: input.taskKey,
    workflowId,
    project: input.project,
    upstream: input.upstream,
    generation,
    watch,
    pollIntervalMs: input.pollIntervalMs,
  };
}
