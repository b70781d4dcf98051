/**
 * Temporal's OpenTelemetry interceptors, when this process traces (src/telemetry/tracing.ts): the API's
 * client starts and updates workflows in spans and hands the trace context on in their headers (the
 * worker's client too: the watch hub's signals, the creation reconciler's starts), and the
 * worker runs each activity in a span that continues it, so an upstream call made by an activity shares
 * the trace of the request that created the task. Loaded only when tracing is on. Workflow spans come
 * from the workflow bundle itself (workflows/tracing.ts, whatever this process's configuration) and leave
 * it through the `exporter` sink below, which every worker registers.
 */
import type { SerializableSpan } from '@temporalio/interceptors-opentelemetry/lib/workflow/definitions';
import type { ClientInterceptors } from '@temporalio/client';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import type { Sinks, WorkflowInfo } from '@temporalio/workflow';
import { createTraceState } from '@opentelemetry/api';
import type { resources, tracing } from '@opentelemetry/sdk-node';
import { tracingEnabled, workflowSpanTarget } from '../telemetry/tracing';

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

interface WorkflowSpanSinks extends Sinks {
  exporter: { export(spans: SerializableSpan[]): void };
}

/**
 * The sink workflow spans leave the sandbox through (called after each activation, never in replay),
 * handed to this process's span processors; dropped when it does not trace. Converted here rather than
 * with the package's makeWorkflowExporter: that one builds spans for OpenTelemetry SDK 1.x and copies the
 * whole workflow info (memo, search attributes) into their attributes.
 */
export function workflowSpanSinks(): InjectedSinks<WorkflowSpanSinks> {
  return {
    exporter: {
      export: {
        fn: (info: WorkflowInfo, spans: SerializableSpan[]) => {
          const target = workflowSpanTarget();
          if (!target) return;
          for (const span of spans) {
            const readable = readableSpan(span, info, target.resource);
            for (const processor of target.processors) processor.onEnd(readable);
          }
        },
      },
    },
  };
}

function readableSpan(
  span: SerializableSpan,
  info: WorkflowInfo,
  resource: resources.Resource,
): tracing.ReadableSpan {
  const { traceState, ...context } = span.spanContext;
  const spanContext = {
    ...context,
    ...(traceState !== undefined && { traceState: createTraceState(traceState) }),
  };
  return {
    name: span.name,
    kind: span.kind,
    spanContext: () => spanContext,
    ...(span.parentSpanId !== undefined && {
      parentSpanContext: {
        traceId: context.traceId,
        spanId: span.parentSpanId,
        traceFlags: context.traceFlags,
      },
    }),
    startTime: span.startTime,
    endTime: span.endTime,
    status: span.status,
    // The workflow id is the task key's (never the task id, a secret).
    attributes: { ...span.attributes, temporalWorkflowId: info.workflowId, run_id: info.runId },
    links: span.links,
    events: span.events,
    duration: span.duration,
    ended: span.ended,
    resource,
    instrumentationScope: span.instrumentationLibrary,
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
  };
}
