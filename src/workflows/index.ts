/** Workflow bundle entry point (the worker's `workflowsPath`). */
export { taskWorkflow } from './task-workflow';
