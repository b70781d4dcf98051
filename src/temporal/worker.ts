/** Builds the task worker: the workflow bundle, the activities and the encrypting data converter. */
import type { NativeConnection, WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import type { TaskActivities } from '../activities';
import type { Cipher } from '../store/cipher';
import { createDataConverter } from './codec';

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;

/** Bundling takes seconds; do it once per process. */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflowCode({
    workflowsPath: require.resolve('../workflows'),
    failureConverterPath: require.resolve('./failure-converter'),
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} },
  });
  return bundle;
}

export interface TaskWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: TaskActivities;
  cipher: Cipher;
  /** Concurrent watch activities are mostly idle I/O; allow many per process. */
  maxConcurrentActivities?: number;
}

export async function createTaskWorker(opts: TaskWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    workflowBundle: await workflowBundle(),
    activities: opts.activities,
    dataConverter: createDataConverter(opts.cipher),
    maxConcurrentActivityTaskExecutions: opts.maxConcurrentActivities ?? 2000,
    maxConcurrentLocalActivityExecutions: 200,
    shutdownGraceTime: '5s',
  });
}
