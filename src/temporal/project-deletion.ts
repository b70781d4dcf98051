/** Starts (or joins) a project's deletion workflow: the admin API and the CLI use this. */
import type { Client } from '@temporalio/client';
import type { projectDeletionWorkflow } from '../workflows/project-deletion';
import { PROJECT_DELETION_WORKFLOW_TYPE, projectDeletionWorkflowId } from '../workflows/messages';

export async function startProjectDeletion(
  client: Client,
  taskQueue: string,
  projectId: string,
  batchSize: number,
): Promise<{ workflowId: string }> {
  const handle = await client.workflow.start<typeof projectDeletionWorkflow>(PROJECT_DELETION_WORKFLOW_TYPE, {
    workflowId: projectDeletionWorkflowId(projectId),
    taskQueue,
    args: [{ projectId, batchSize }],
    // A repeated request joins the deletion already running.
    workflowIdConflictPolicy: 'USE_EXISTING',
    staticSummary: 'project deletion',
  });
  return { workflowId: handle.workflowId };
}
