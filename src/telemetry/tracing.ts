/**
 * OpenTelemetry tracing, on when the standard `OTEL_*` variables ask for an exporter
 * (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_TRACES_EXPORTER`), off
 * otherwise (and with `OTEL_SDK_DISABLED=true`). Spans: HTTP server requests, HTTP and undici client
 * requests (the calls to upstreams, which receive the W3C `traceparent`), and — through Temporal's
 * interceptors, see src/temporal — workflow starts, updates and activities. Must start before the
 * modules it instruments are loaded: `serve` starts it first thing.
 */
let enabled = false;

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

/** Starts the SDK when requested; the returned function flushes and stops it. */
export async function startTracing(serviceName: string): Promise<(() => Promise<void>) | undefined> {
  if (!tracingRequested()) return undefined;
  const { NodeSDK } = await import('@opentelemetry/sdk-node');
  const { HttpInstrumentation } = await import('@opentelemetry/instrumentation-http');
  const { UndiciInstrumentation } = await import('@opentelemetry/instrumentation-undici');
  const sdk = new NodeSDK({
    serviceName: process.env['OTEL_SERVICE_NAME'] ?? serviceName,
    instrumentations: [new HttpInstrumentation(), new UndiciInstrumentation()],
  });
  sdk.start();
  enabled = true;
  return () => sdk.shutdown();
}
