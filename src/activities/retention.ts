/**
 * Retention and project-deletion activities (docs/retention.md). Each call handles one bounded batch and
 * is idempotent, so a worker that dies mid-batch costs nothing but a retry: the workflows loop over them.
 */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { ControlPlaneStore } from '../store/control-plane';
import { ControlPlaneError } from '../store/control-plane';
import type { Principal } from '../store/control-plane/types';
import type { FirstCalls } from '../store/tasks/first-calls';
import { retentionPurged, retentionRuns } from '../telemetry/metrics';
import type { TaskStore } from '../store/tasks/task-store';
import type { PurgeBatchInput, StopProjectTasksInput, StopProjectTasksResult } from '../workflows/messages';
import { cancelTaskUpdate } from '../workflows/messages';

export interface RetentionActivityDeps {
  store: TaskStore;
  firstCalls?: FirstCalls;
  controlPlane: ControlPlaneStore;
  /** A Temporal client (project deletion stops task workflows through it). */
  temporalClient(): Promise<Client>;
  logger: Logger;
  /** How long to wait for the upstream to accept `tasks/cancel` before the workflow is stopped anyway. */
  cancelTimeoutMs?: number;
}

/** Who deletes the control-plane rows at the end of a deletion (the requester was checked at request). */
const DELETION_ACTOR: Principal = { kind: 'admin', via: 'api' };

export function createRetentionActivities(deps: RetentionActivityDeps) {
  const cancelTimeoutMs = deps.cancelTimeoutMs ?? 15_000;

  async function stopTaskWorkflow(client: Client, workflowId: string): Promise<void> {
    const handle = client.workflow.getHandle(workflowId);
    // Ask the upstream to cancel through the task workflow (it holds the upstream task id); whatever the
    // answer, the workflow is then terminated: the project's credentials are about to go.
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        handle.executeUpdate(cancelTaskUpdate),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('cancel timed out')), cancelTimeoutMs);
        }),
      ]);
    } catch (err) {
      deps.logger.info({ workflowId, err: (err as Error).name }, 'task not cancelled upstream');
    } finally {
      clearTimeout(timer);
    }
    try {
      await handle.terminate('project deleted');
    } catch (err) {
      if ((err as Error).name !== 'WorkflowNotFoundError') throw err;
    }
  }

  return {
    /** One retention batch; returns how many tasks it handled (fewer than `batchSize`: done). */
    async purgeRetentionBatch(input: PurgeBatchInput): Promise<number> {
      Context.current().heartbeat();
      const n =
        input.kind === 'payloads'
          ? await deps.store.purgePayloadsBefore(input.cutoff, input.batchSize)
          : await deps.store.purgeMetadataBefore(input.cutoff, input.batchSize);
      retentionRuns.inc({ kind: input.kind });
      retentionPurged.inc({ kind: input.kind }, n);
      // First-call claims matter only until their task started: they go with the payloads.
      if (input.kind === 'payloads') await deps.firstCalls?.purge(input.cutoff);
      Context.current().heartbeat(n);
      return n;
    },

    /** Stops one page of a project's running task workflows (asking their upstreams to cancel first). */
    async stopProjectTasks(input: StopProjectTasksInput): Promise<StopProjectTasksResult> {
      const tasks = await deps.store.listActiveProjectTasks(input.projectId, input.afterKey, input.batchSize);
      const client = await deps.temporalClient();
      const CONCURRENCY = 16;
      for (let i = 0; i < tasks.length; i += CONCURRENCY) {
        await Promise.all(tasks.slice(i, i + CONCURRENCY).map((t) => stopTaskWorkflow(client, t.workflowId)));
        Context.current().heartbeat(i);
      }
      return { count: tasks.length, lastKey: tasks.at(-1)?.taskKey ?? input.afterKey };
    },

    /** Deletes one batch of a project's tasks, payloads and history. */
    async deleteProjectTaskData(input: { projectId: string; batchSize: number }): Promise<number> {
      Context.current().heartbeat();
      return deps.store.deleteProjectTasks(input.projectId, input.batchSize);
    },

    /** Deletes the project's control-plane rows (keys, upstreams and credentials, members). */
    async deleteProjectRecords(input: { projectId: string }): Promise<boolean> {
      try {
        await deps.controlPlane.deleteProject(DELETION_ACTOR, input.projectId);
        return true;
      } catch (err) {
        // Already gone: a retry after the transaction committed.
        if (err instanceof ControlPlaneError && err.code === 'not_found') return false;
        throw err;
      }
    },
  };
}

export type RetentionActivities = ReturnType<typeof createRetentionActivities>;
