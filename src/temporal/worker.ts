/** Builds the task worker: the workflow bundle, the activities and the encrypting data converter. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type {
  BundleOptions,
  NativeConnection,
  WorkerOptions,
  WorkflowBundleOption,
  WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import type { TaskActivities } from '../activities';
import type { Cipher } from '../store/cipher';
import { createDataConverter } from './codec';
import { activityTracing, workflowSpanSinks } from './tracing';

/**
 * The workflow bundle `npm run build` writes (scripts/build.mjs): `dist/workflow-bundle.js`, two folders
 * above the compiled `dist/src/temporal/worker.js`. Run from the TypeScript sources (tests, tsx) this
 * path does not exist and the worker bundles in-process instead.
 */
export const PREBUILT_WORKFLOW_BUNDLE = path.join(__dirname, '..', '..', 'workflow-bundle.js');

/** What goes into the bundle; the build and the in-process fallback use the same options. */
export function workflowBundleOptions(): BundleOptions {
  return {
    workflowsPath: require.resolve('../workflows'),
    // Workflow spans, in every bundle: whether a run is traced is decided from its history (see there).
    workflowInterceptorModules: [require.resolve('../workflows/tracing')],
    failureConverterPath: require.resolve('./failure-converter'),
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} },
  };
}

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;

/** The prebuilt bundle when there is one; else bundling (webpack, seconds), once per process. */
export function workflowBundle(): Promise<WorkflowBundleOption> {
  if (existsSync(PREBUILT_WORKFLOW_BUNDLE)) return Promise.resolve({ codePath: PREBUILT_WORKFLOW_BUNDLE });
  bundle ??= bundleWorkflowCode(workflowBundleOptions());
  return bundle;
}

export interface TaskWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: TaskActivities;
  cipher: Cipher;
  /** Concurrent watch activities are mostly idle I/O; allow many per process (`temporal.maxConcurrentActivities`). */
  maxConcurrentActivities?: number;
  /** Workflows kept cached between workflow tasks (`temporal.maxCachedWorkflows`); the SDK's default when unset. */
  maxCachedWorkflows?: number;
  /** First upstream calls of task creations and short store writes (`temporal.maxConcurrentLocalActivities`). */
  maxConcurrentLocalActivities?: number;
  /** Workflow tasks at once; a first call's task holds its slot while the call runs (`temporal.maxConcurrentWorkflowTasks`). */
  maxConcurrentWorkflowTasks?: number;
  /** How long running activities may go on after `shutdown()` before they are cancelled. */
  shutdownGraceMs?: number;
  /** Longest a workflow activation may run before it fails (`temporal.workflowActivationLimitMs`); none when unset. */
  activationLimitMs?: number;
  /** Record each workflow's stack for the `__stack_trace` query (`temporal.workflowStackTraces`); default off. */
  stackTraces?: boolean;
}

/**
 * Whether workers created in this process from now on record workflow stack traces (`__stack_trace`);
 * off unless asked for. The patched SDK (patches/) reads it in a worker's workflow thread, whose
 * environment is a copy of this process's taken when the thread starts, during Worker.create: a process
 * that creates workers with different settings must create them one after the other. Child processes
 * inherit it.
 */
export function setWorkflowStackTraces(on = false): void {
  process.env['TASKROUTER_WORKFLOW_STACK_TRACES'] = on ? 'on' : 'off';
}

/**
 * The SDK's "no limit" (what its debug mode uses). With it, the patched SDK (patches/, docs/performance.md)
 * starts no watchdog thread per call into the workflow sandbox, which cost ~0.15 ms of CPU per call and
 * about a third of the worker's CPU per task.
 */
export const NO_ACTIVATION_LIMIT_MS = 4_294_967_295;

export const DEFAULT_MAX_CONCURRENT_ACTIVITIES = 2000;

export async function createTaskWorker(opts: TaskWorkerOptions): Promise<Worker> {
  setWorkflowStackTraces(opts.stackTraces);
  return Worker.create(
    withActivationLimit(opts.activationLimitMs ?? NO_ACTIVATION_LIMIT_MS, {
      connection: opts.connection,
      namespace: opts.namespace,
      taskQueue: opts.taskQueue,
      workflowBundle: await workflowBundle(),
      activities: opts.activities,
      dataConverter: createDataConverter(opts.cipher),
      maxConcurrentActivityTaskExecutions: opts.maxConcurrentActivities ?? DEFAULT_MAX_CONCURRENT_ACTIVITIES,
      ...(opts.maxCachedWorkflows !== undefined && { maxCachedWorkflows: opts.maxCachedWorkflows }),
      maxConcurrentLocalActivityExecutions: opts.maxConcurrentLocalActivities ?? 200,
      maxConcurrentWorkflowTaskExecutions: opts.maxConcurrentWorkflowTasks ?? 250,
      shutdownGraceTime: opts.shutdownGraceMs ?? 5000,
      // Heartbeats (which carry a cancellation back) go out at least every 5 s whatever the activity's
      // heartbeat timeout: a hosted call tolerates a 30 s stall before it counts as lost, yet learns of a
      // tasks/cancel within seconds. Watches (timeout 5 s) heartbeat every 4 s as before.
      maxHeartbeatThrottleInterval: '5 seconds',
      interceptors: { activity: await activityTracing() },
      sinks: workflowSpanSinks(),
    }),
  );
}

/**
 * `isolateExecutionTimeout` is a worker option the SDK keeps out of its public type (it defaults to 5 s,
 * or to the maximum in debug mode) but honours when given; test/temporal/activation-limit.test.ts checks
 * that it still reaches the sandbox.
 */
export function withActivationLimit(limitMs: number, options: WorkerOptions): WorkerOptions {
  return { ...options, isolateExecutionTimeout: limitMs } as WorkerOptions;
}
