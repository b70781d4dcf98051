/** Workflow bundle entry point (the worker's `workflowsPath`). */
export { taskWorkflow } from './task-workflow';
export { approvalTaskWorkflow, hostedTaskWorkflow } from './hosted-task-workflow';
export { retentionWorkflow } from './retention';
export { projectDeletionWorkflow } from './project-deletion';
