/**
 * Workflow spans (@temporalio/interceptors-opentelemetry), registered in the workflow bundle as an
 * interceptor module (temporal/worker.ts, `workflowInterceptorModules`). The bundle is built once
 * (scripts/build.mjs) and is the same in every worker, tracing or not, so whether a workflow is traced
 * must come from its history, never from the worker's configuration: otherwise a workflow replayed by
 * another worker would run other code (the interceptors add awaits, and so move the moment the workflow
 * sees an activity's result relative to a signal in the same activation).
 *
 * A run is traced when its start carried a trace context (the API's client interceptor puts one in the
 * start's headers when the API traces) and it started after this module existed (a patch marker, so runs
 * started before replay exactly as they ran). Its spans (workflow execute, signals, updates, queries,
 * activity and local activity starts, continue-as-new) leave the workflow through the `exporter` sink,
 * which every worker registers (temporal/tracing.ts): spans of a worker that does not trace are dropped.
 */
import type {
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptors,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import { patched } from '@temporalio/workflow';
import type * as WorkflowOtelModule from '@temporalio/interceptors-opentelemetry/lib/workflow';
import type {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';

type WorkflowOtel = typeof WorkflowOtelModule;

/**
 * The package (with @opentelemetry/api, about half the modules of the bundle) is loaded only by a run
 * that is traced. The SDK evaluates a bundle's modules again for every workflow run (module state stays
 * per run), so importing it at the top cost every untraced run about 2.4 ms of CPU for nothing
 * (docs/performance.md). webpack still bundles it: `require` is resolved at build time.
 */
function loadOtel(): WorkflowOtel {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('@temporalio/interceptors-opentelemetry/lib/workflow') as WorkflowOtel;
}

/** The header the client interceptor writes (`TRACE_HEADER` of the interceptors package). */
const TRACE_HEADER = '_tracer-data';
/** Runs started before workflow spans existed replay without them. */
const WORKFLOW_SPANS = 'workflow-spans';

interface Traced {
  inbound: OpenTelemetryInboundInterceptor;
  outbound: OpenTelemetryOutboundInterceptor;
  internals: OpenTelemetryInternalsInterceptor;
}

/** The factory the SDK calls once per workflow run: `traced` is this run's decision. */
export const interceptors = (): WorkflowInterceptors => {
  let traced: Traced | undefined;

  const inbound: WorkflowInboundCallsInterceptor = {
    execute(input, next) {
      if (input.headers[TRACE_HEADER] === undefined || !patched(WORKFLOW_SPANS)) return next(input);
      const otel = loadOtel();
      traced = {
        inbound: new otel.OpenTelemetryInboundInterceptor(),
        outbound: new otel.OpenTelemetryOutboundInterceptor(),
        internals: new otel.OpenTelemetryInternalsInterceptor(),
      };
      return traced.inbound.execute(input, next);
    },
    handleSignal: (input, next) => (traced ? traced.inbound.handleSignal(input, next) : next(input)),
    handleUpdate: (input, next) => (traced ? traced.inbound.handleUpdate(input, next) : next(input)),
    validateUpdate: (input, next) => (traced ? traced.inbound.validateUpdate(input, next) : next(input)),
    handleQuery: (input, next) => (traced ? traced.inbound.handleQuery(input, next) : next(input)),
  };

  const outbound: WorkflowOutboundCallsInterceptor = {
    scheduleActivity: (input, next) => (traced ? traced.outbound.scheduleActivity(input, next) : next(input)),
    scheduleLocalActivity: (input, next) =>
      traced ? traced.outbound.scheduleLocalActivity(input, next) : next(input),
    startChildWorkflowExecution: (input, next) =>
      traced ? traced.outbound.startChildWorkflowExecution(input, next) : next(input),
    continueAsNew: (input, next) => (traced ? traced.outbound.continueAsNew(input, next) : next(input)),
    signalWorkflow: (input, next) => (traced ? traced.outbound.signalWorkflow(input, next) : next(input)),
    getLogAttributes: (input, next) => (traced ? traced.outbound.getLogAttributes(input, next) : next(input)),
  };

  return {
    inbound: [inbound],
    outbound: [outbound],
    internals: [
      {
        // The package's dispose is async but does its work before its first await.
        dispose(input, next) {
          if (traced) void traced.internals.dispose(input, next);
          else next(input);
        },
      },
    ],
  };
};
