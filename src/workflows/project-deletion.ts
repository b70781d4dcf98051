/**
 * Deletes a project (docs/retention.md): the API has already marked it deleting, so it no longer serves.
 * 1. stops its running task workflows page by page (each is asked to cancel its upstream task, then
 *    terminated), 2. deletes its tasks, payloads and history in batches, 3. deletes its control-plane rows
 *    (keys, upstreams and credentials, members, authorizations). Every step is an idempotent activity, so
 *    a crash anywhere resumes where the history says. Workflow id `project-deletion-<projectId>`.
 */
import { continueAsNew, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { RetentionActivities } from '../activities/retention';
import type { ProjectDeletionInput } from './messages';

const { stopProjectTasks, deleteProjectTaskData, deleteProjectRecords } =
  proxyActivities<RetentionActivities>({
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '2 minutes',
    retry: { initialInterval: '1s', maximumInterval: '1 minute' },
  });

export interface ProjectDeletionResult {
  projectId: string;
}

export async function projectDeletionWorkflow(input: ProjectDeletionInput): Promise<ProjectDeletionResult> {
  const { projectId, batchSize } = input;
  if ((input.phase ?? 'stop') === 'stop') {
    let afterKey = input.afterKey ?? '';
    for (;;) {
      const page = await stopProjectTasks({ projectId, afterKey, batchSize });
      afterKey = page.lastKey;
      if (page.count < batchSize) break;
      if (workflowInfo().continueAsNewSuggested) {
        return continueAsNew<typeof projectDeletionWorkflow>({ ...input, phase: 'stop', afterKey });
      }
    }
  }
  for (;;) {
    const n = await deleteProjectTaskData({ projectId, batchSize });
    if (n < batchSize) break;
    if (workflowInfo().continueAsNewSuggested) {
      return continueAsNew<typeof projectDeletionWorkflow>({ ...input, phase: 'delete' });
    }
  }
  await deleteProjectRecords({ projectId });
  return { projectId };
}
