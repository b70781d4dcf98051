/**
 * Workflow spans (src/workflows/tracing.ts) are in every workflow bundle, and whether a run is traced is
 * decided by its history: a run that an API which traces started on workers from before the spans existed
 * replays unchanged on today's bundle, and a run started today records its decision (a patch marker) and
 * replays as well. Both runs ask for input and get it (an update and a signal), then complete.
 */
import type * as OtelClientInterceptors from '@temporalio/interceptors-opentelemetry/lib/client';
import type { temporal } from '@temporalio/proto';
import type * as TemporalWorker from '@temporalio/worker';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { TASKS_AND_FORM_CAPS } from '../helpers/mcp-client';
import { endedTaskHistory } from '../helpers/task-steps';
import { Cipher } from '../../src/store/cipher';
import { createDataConverter } from '../../src/temporal/codec';
import { workflowSpanSinks } from '../../src/temporal/tracing';
import type * as Codec from '../../src/temporal/codec';
import type * as Tracing from '../../src/temporal/tracing';
import type * as TaskWorker from '../../src/temporal/worker';
import type { TaskWorkerOptions } from '../../src/temporal/worker';
import { workflowBundleOptions } from '../../src/temporal/worker';

/** Which bundle the gateway's worker runs: from before the workflow spans, or today's. */
const mockBundle: { use: 'before' | 'now'; bundles: Partial<Record<'before' | 'now', unknown>> } = {
  use: 'before',
  bundles: {},
};

// The API as when it traces: its Temporal client puts the trace context into the start's headers.
jest.mock('../../src/temporal/tracing', () => {
  const actual = jest.requireActual<typeof Tracing>('../../src/temporal/tracing');
  const { OpenTelemetryWorkflowClientInterceptor } = jest.requireActual<typeof OtelClientInterceptors>(
    '@temporalio/interceptors-opentelemetry/lib/client',
  );
  return {
    ...actual,
    clientTracing: async () => ({ workflow: [new OpenTelemetryWorkflowClientInterceptor()] }),
  };
});

// The worker as createTaskWorker builds it, with the bundle this test chooses.
jest.mock('../../src/temporal/worker', () => {
  const actual = jest.requireActual<typeof TaskWorker>('../../src/temporal/worker');
  const { Worker: RealWorker } = jest.requireActual<typeof TemporalWorker>('@temporalio/worker');
  const codec = jest.requireActual<typeof Codec>('../../src/temporal/codec');
  const tracing = jest.requireActual<typeof Tracing>('../../src/temporal/tracing');
  return {
    ...actual,
    createTaskWorker: async (opts: TaskWorkerOptions) =>
      RealWorker.create({
        connection: opts.connection,
        namespace: opts.namespace,
        taskQueue: opts.taskQueue,
        workflowBundle: mockBundle.bundles[mockBundle.use] as WorkflowBundleWithSourceMap,
        activities: opts.activities,
        dataConverter: codec.createDataConverter(opts.cipher),
        shutdownGraceTime: opts.shutdownGraceMs ?? 5000,
        sinks: tracing.workflowSpanSinks(),
      }),
  };
});

let gw: TestGateway;

beforeAll(async () => {
  const options = workflowBundleOptions();
  mockBundle.bundles.before = await bundleWorkflowCode({ ...options, workflowInterceptorModules: [] });
  mockBundle.bundles.now = await bundleWorkflowCode(options);
  gw = await startTestGateway();
}, 180_000);
afterAll(async () => {
  await gw?.close();
});

/** A task that asks for input, is answered and completes; its workflow's history. */
async function runTask(): Promise<temporal.api.history.v1.IHistory> {
  const created = await gw.client.callTool(
    'confirm_delete',
    { filename: 'spans.txt' },
    { capabilities: TASKS_AND_FORM_CAPS },
  );
  const taskId = String(created.body.result?.taskId);
  await gw.client.waitForTask(taskId, (s) => s === 'input_required');
  const ack = await gw.client.request(
    'tasks/update',
    { taskId, inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } },
    { capabilities: TASKS_AND_FORM_CAPS },
  );
  expect(ack.body.result).toMatchObject({ resultType: 'complete' });
  expect(await gw.client.waitForTask(taskId)).toMatchObject({ status: 'completed' });
  return endedTaskHistory(gw, taskId);
}

function traceHeader(history: temporal.api.history.v1.IHistory): unknown {
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  return started?.header?.fields?.['_tracer-data'];
}

/** The patch markers' data (the patch ids). */
function markers(history: temporal.api.history.v1.IHistory): string[] {
  return (history.events ?? []).flatMap((e) =>
    (e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads ?? []).map((p) =>
      Buffer.from(p.data ?? []).toString(),
    ),
  );
}

test('runs from before the workflow spans and runs with them both replay on the current bundle', async () => {
  const before = await runTask();
  await gw.stop();
  mockBundle.use = 'now';
  await gw.start();
  const now = await runTask();

  // Both starts carried a trace context; only today's run decided to trace (the patch marker).
  expect(traceHeader(before)).toBeDefined();
  expect(traceHeader(now)).toBeDefined();
  expect(markers(before).join()).not.toContain('workflow-spans');
  expect(markers(now).join()).toContain('workflow-spans');

  const replay = {
    workflowBundle: mockBundle.bundles.now as WorkflowBundleWithSourceMap,
    dataConverter: createDataConverter(new Cipher(gw.config.encryption)),
    sinks: workflowSpanSinks(),
  };
  await expect(Worker.runReplayHistory(replay, before)).resolves.toBeUndefined();
  await expect(Worker.runReplayHistory(replay, now)).resolves.toBeUndefined();
}, 180_000);
