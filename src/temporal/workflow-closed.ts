/**
 * Whether a workflow is closed, asked through Temporal (describe reads the execution itself, not the
 * visibility store, so a workflow terminated a moment ago is seen closed). One that Temporal no longer
 * knows (retention passed) is closed too.
 */
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';

/** Closed for good: a paused workflow (or one whose status is unknown) is not, its activities may run. */
const CLOSED = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TERMINATED', 'TIMED_OUT', 'CONTINUED_AS_NEW']);

export async function workflowClosed(client: Client, workflowId: string): Promise<boolean> {
  try {
    const described = await client.workflow.getHandle(workflowId).describe();
    return CLOSED.has(described.status.name);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return true;
    throw err;
  }
}
