/**
 * The `temporal` section: where the Temporal server is, and how much one worker takes on at once
 * (docs/configuration.md; sizing in docs/operators.md).
 */
import { z } from 'zod';

export const TemporalConfigSchema = z.strictObject({
  address: z.string().default('127.0.0.1:7233'),
  namespace: z.string().default('taskrouter'),
  taskQueue: z.string().default('taskrouter-tasks'),
  /**
   * Base URL of the Temporal Web UI (e.g. `http://localhost:8233`): the dashboard links each task to
   * its workflow there, for team members. Without it the dashboard shows the workflow id only.
   */
  uiUrl: z.url({ protocol: /^https?$/ }).optional(),
  /**
   * Longest one workflow activation (the gateway's own workflow code, between two awaits) may run
   * before the worker fails it, as a guard against a workflow stuck in a loop. Unset (the default):
   * no limit, because enforcing one costs a watchdog thread per call into the workflow sandbox, about
   * a third of the worker's CPU per task (docs/performance.md).
   */
  workflowActivationLimitMs: z.int().positive().max(4_294_967_294).optional(),
  /**
   * Whether the worker records where each workflow waits, for the Temporal Web UI's "Stack Trace" tab
   * (the SDK's `__stack_trace` query). Off by default: the SDK records it by making an Error and a
   * source-mapped stack for every promise a workflow creates, about half the workflow thread's CPU (3 ms
   * of a task's end, docs/performance.md), and a task workflow only ever waits in one place, which its
   * current details already say. Off, that tab says stack traces are not enabled on this worker.
   */
  workflowStackTraces: z.boolean().default(false),
  /**
   * Local activities a worker runs at once: every task creation's first upstream call, and the short
   * store writes of running tasks. 200: what the worker always ran (the SDK's own default is 100).
   * The API keeps each replica's creations in flight (`fairShare.creations.inFlightTotal`) below
   * what the workers offer (docs/operators.md, "Sizing fair shares").
   */
  maxConcurrentLocalActivities: z.int().positive().default(200),
  /**
   * Workflow tasks a worker runs at once. A creation's first workflow task stays open (holding its
   * slot) while the first call runs as its local activity, and pollers reserve up to 10 slots more,
   * so with the SDK's default of 40 about 30 slow first calls stopped every other creation. 250:
   * local-activity slots plus pollers plus room for the tasks that only record a change.
   */
  maxConcurrentWorkflowTasks: z.int().positive().default(250),
  /**
   * Activities a worker runs at once (the SDK's `maxConcurrentActivityTaskExecutions`). Every task in
   * flight holds one running watch activity, so this is the number of tasks one worker watches; a task
   * past it waits in Temporal's queue, unpolled, and the worker says so: `/readyz` reports
   * `degraded: ["watches"]`, `/metrics` the watch lag per upstream (docs/operators.md). 2000: the
   * worker's long-standing value; a watch is mostly idle I/O.
   */
  maxConcurrentActivities: z.int().positive().default(2000),
  /**
   * Workflows a worker keeps cached between their workflow tasks (the SDK's `maxCachedWorkflows`; 0
   * turns the cache off). A smaller cache costs a replay of a task's history when its workflow wakes; a
   * larger one memory and garbage-collection time for every task that only waits. 500: twice the
   * workflow-task slots, so the workflows at work stay cached while those that wait on the watch hub are
   * evicted. The SDK's own default (about 600 per GiB of heap, 2,310 on a 4 GiB heap) kept waiting
   * workflows: at 5,000 tasks in flight it doubled the gateway's RSS and its idle CPU and tripled the
   * completion lag (docs/performance.md, "The workflow cache").
   */
  maxCachedWorkflows: z.int().nonnegative().default(500),
});
