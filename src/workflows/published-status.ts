/**
 * What task workflows (upstream tasks and hosted ones) show operators in the Temporal Web UI, and the
 * access part of their activity inputs. Workflow code: deterministic, no I/O.
 */
import { setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import type { TaskWorkflowInput } from './messages';
import { SA_STATUS } from './search-attributes';

/**
 * The operator's view of the task's progress in the Temporal Web UI: the status search attribute (for
 * filtering) and the workflow's current details. Status only: status messages can echo arguments.
 */
export function publishStatus(status: string): void {
  upsertSearchAttributes([{ key: SA_STATUS, value: status }]);
  setCurrentDetails(statusDetails(status));
}

export function statusDetails(status: string): string {
  return `MCP task status: **${status}**. Inputs and results are encrypted; the project dashboard shows them to the user who started the task.`;
}

export function accessOf(input: TaskWorkflowInput) {
  return {
    project: input.project,
    upstream: input.upstream,
    principal: input.principal,
    authorizationId: input.authorizationId,
    ...(input.upstreamAddress !== undefined && { upstreamAddress: input.upstreamAddress }),
  };
}
