/**
 * Temporal's OpenTelemetry interceptors, when this process traces (src/telemetry/tracing.ts): the API's
 * client starts and updates workflows in spans and hands the trace context on in their headers, and the
 * worker runs each activity in a span that continues it, so an upstream call made by an activity shares
 * the trace of the request that created the task. Loaded only when tracing is on.
 */
import type { ClientInterceptors } from '@temporalio/client';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { tracingEnabled } from '../telemetry/tracing';

export async function clientTracing(): Promise<ClientInterceptors | undefined> {
  if (!tracingEnabled()) return undefined;
  const { OpenTelemetryWorkflowClientInterceptor } =
    await import('@temporalio/interceptors-opentelemetry/lib/client');
  return { workflow: [new OpenTelemetryWorkflowClientInterceptor()] };
}

export async function activityTracing(): Promise<ActivityInterceptorsFactory[]> {
  if (!tracingEnabled()) return [];
  const { OpenTelemetryActivityInboundInterceptor } =
    await import('@temporalio/interceptors-opentelemetry/lib/worker');
  return [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx) })];
}
