/**
 * OpenTelemetry tracing, on when the standard `OTEL_*` variables ask for an exporter
 * (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_TRACES_EXPORTER`), off
 * otherwise (and with `OTEL_SDK_DISABLED=true`). Spans: HTTP server requests, HTTP and undici client
 * requests (the calls to upstreams, which receive the W3C `traceparent`), and — through Temporal's
 * interceptors, see src/temporal — workflow starts, updates, workflow runs and activities. Must start
 * before the modules it instruments are loaded: `serve` starts it first thing.
 */
import type { resources, tracing } from '@opentelemetry/sdk-node';

let enabled = false;

/** Where workflow spans go: they leave the workflow sandbox through a sink (temporal/tracing.ts). */
export interface WorkflowSpanTarget {
  processors: tracing.SpanProcessor[];
  resource: resources.Resource;
}

let workflowSpans: WorkflowSpanTarget | undefined;

export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env['OTEL_SDK_DISABLED'] === 'true') return false;
  const exporter = env['OTEL_TRACES_EXPORTER'];
  return Boolean(
    env['OTEL_EXPORTER_OTLP_ENDPOINT'] ||
    env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'] ||
    (exporter !== undefined && exporter !== 'none'),
  );
}

/** Whether this process traces (Temporal's interceptors are added only then). */
export function tracingEnabled(): boolean {
  return enabled;
}

/** The processors and resource of this process's spans, while it traces. */
export function workflowSpanTarget(): WorkflowSpanTarget | undefined {
  return workflowSpans;
}

/**
 * Starts the SDK when requested; the returned function flushes and stops it. `spanProcessors` replace
 * the ones the `OTEL_*` variables choose (and start it whatever they say): an in-process test's exporter.
 */
export async function startTracing(
  serviceName: string,
  opts: { spanProcessors?: tracing.SpanProcessor[] } = {},
): Promise<(() => Promise<void>) | undefined> {
  if (!opts.spanProcessors && !tracingRequested()) return undefined;
  const { NodeSDK, resources } = await import('@opentelemetry/sdk-node');
  // The SDK's own choice of exporters from OTEL_* (what it does when given none), made here so that
  // workflow spans, which the SDK never sees, go to the same processors.
  const { getSpanProcessorsFromEnv } = await import('@opentelemetry/sdk-node/build/src/utils');
  const { HttpInstrumentation } = await import('@opentelemetry/instrumentation-http');
  const { UndiciInstrumentation } = await import('@opentelemetry/instrumentation-undici');
  const name = process.env['OTEL_SERVICE_NAME'] ?? serviceName;
  const spanProcessors = opts.spanProcessors ?? getSpanProcessorsFromEnv(undefined);
  const instrumentations = [new HttpInstrumentation(), new UndiciInstrumentation()];
  const sdk = new NodeSDK({ serviceName: name, spanProcessors, instrumentations });
  sdk.start();
  enabled = true;
  workflowSpans = {
    processors: spanProcessors,
    resource: resources
      .defaultResource()
      .merge(resources.detectResources({ detectors: [resources.envDetector] }))
      .merge(resources.resourceFromAttributes({ 'service.name': name })),
  };
  return async () => {
    workflowSpans = undefined;
    enabled = false;
    // The SDK's shutdown leaves instrumentations on: their diagnostics-channel subscriptions and http
    // patches are process-wide and would outlive this SDK (a later start, e.g. the next test file in
    // the same process, would then see every upstream request get a second traceparent).
    for (const instrumentation of instrumentations) instrumentation.disable();
    await sdk.shutdown();
  };
}
