/**
 * The API's view of the task workflows: start one with update-with-start, query its snapshot, signal
 * input and cancellation. The only module of the API process that talks to Temporal.
 */
import type { Client } from '@temporalio/client';
import { WithStartWorkflowOperation } from '@temporalio/client';
import type {
  CancelOutcome,
  FirstOutcome,
  InputSignal,
  TaskObservation,
  TaskWorkflowInput,
} from '../workflows/messages';
import {
  cancelTaskUpdate,
  provideInputSignal,
  snapshotQuery,
  startTaskUpdate,
  TASK_WORKFLOW_TYPE,
  taskWorkflowId,
} from '../workflows/messages';
import { SA_CALLER_KIND, SA_PROJECT, SA_STATUS, SA_TOOL, SA_UPSTREAM } from '../workflows/search-attributes';

export interface TaskEngine {
  start(input: TaskWorkflowInput, timeoutMs: number): Promise<FirstOutcome>;
  /** The first outcome of a task already started (its start update asked again). */
  firstOutcome(workflowId: string, timeoutMs: number): Promise<FirstOutcome>;
  snapshot(workflowId: string, timeoutMs: number): Promise<TaskObservation | null>;
  provideInput(workflowId: string, input: InputSignal): Promise<void>;
  /** Resolves once the upstream answered the cancel request (or refused it). */
  cancel(workflowId: string, timeoutMs: number): Promise<CancelOutcome>;
}

export class TemporalTaskEngine implements TaskEngine {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
  ) {}

  async start(input: TaskWorkflowInput, timeoutMs: number): Promise<FirstOutcome> {
    const op = new WithStartWorkflowOperation(TASK_WORKFLOW_TYPE, {
      workflowId: taskWorkflowId(input.taskKey),
      taskQueue: this.taskQueue,
      args: [input],
      // A task key is fresh random; a collision means a bug, never something to join.
      workflowIdConflictPolicy: 'FAIL',
      typedSearchAttributes: [
        { key: SA_PROJECT, value: input.projectSlug },
        { key: SA_UPSTREAM, value: input.upstream },
        { key: SA_TOOL, value: input.call.tool },
        { key: SA_CALLER_KIND, value: input.caller.kind },
        { key: SA_STATUS, value: 'starting' },
      ],
      staticSummary: `${plain(input.projectSlug)}: ${plain(input.upstream)} / ${plain(input.call.tool)}`,
      // Markdown in the Web UI. Metadata only: names, never arguments, ids or credentials.
      staticDetails: [
        `**MCP task** of project \`${plain(input.projectSlug)}\``,
        `- upstream: \`${plain(input.upstream)}\``,
        `- tool: \`${plain(input.call.tool)}\``,
        `- caller: ${input.caller.kind === 'api_key' ? 'API key' : plain(input.caller.kind)}`,
        `- created: ${plain(input.createdAt)}`,
      ].join('\n'),
    });
    return this.client.withDeadline(Date.now() + timeoutMs, () =>
      this.client.workflow.executeUpdateWithStart(startTaskUpdate, { startWorkflowOperation: op }),
    );
  }

  async firstOutcome(workflowId: string, timeoutMs: number): Promise<FirstOutcome> {
    return this.client.withDeadline(Date.now() + timeoutMs, () =>
      this.client.workflow.getHandle(workflowId).executeUpdate(startTaskUpdate),
    );
  }

  async snapshot(workflowId: string, timeoutMs: number): Promise<TaskObservation | null> {
    return this.client.withDeadline(Date.now() + timeoutMs, () =>
      this.client.workflow.getHandle(workflowId).query(snapshotQuery),
    );
  }

  async provideInput(workflowId: string, input: InputSignal): Promise<void> {
    await this.client.workflow.getHandle(workflowId).signal(provideInputSignal, input);
  }

  async cancel(workflowId: string, timeoutMs: number): Promise<CancelOutcome> {
    return this.client.withDeadline(Date.now() + timeoutMs, () =>
      this.client.workflow.getHandle(workflowId).executeUpdate(cancelTaskUpdate),
    );
  }
}

/**
 * A name as inert text for the Web UI's summary and Markdown details: tool names come from clients, so
 * anything that could end a code span or start a link or image is replaced.
 */
function plain(name: string): string {
  return name.replace(/[^\w.:/@+-]/g, '_').slice(0, 200);
}
