/**
 * The API's view of the task workflows: start one with update-with-start (the worker makes the first
 * call) or, for a task the API's own first call created and recorded, with a plain start; query its
 * snapshot, signal input and cancellation. The only module of the API process that talks to Temporal.
 */
import type { Client, WorkflowStartOptions } from '@temporalio/client';
import { WithStartWorkflowOperation, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type {
  ApprovalAnswer,
  ApprovalVote,
  CancelOutcome,
  FirstOutcome,
  InputSignal,
  TaskObservation,
  TaskWorkflowInput,
} from '../workflows/messages';
import {
  cancelTaskUpdate,
  decideApprovalUpdate,
  provideInputSignal,
  snapshotQuery,
  startTaskUpdate,
  APPROVAL_TASK_WORKFLOW_TYPE,
  HOSTED_TASK_WORKFLOW_TYPE,
  TASK_WORKFLOW_TYPE,
  taskWorkflowId,
} from '../workflows/messages';
import { SA_CALLER_KIND, SA_PROJECT, SA_STATUS, SA_TOOL, SA_UPSTREAM } from '../workflows/search-attributes';

export interface TaskEngine {
  start(input: TaskWorkflowInput, timeoutMs: number): Promise<FirstOutcome>;
  /**
   * Starts the workflow of a task already created and recorded (`input.carried` holds the upstream task):
   * it watches the task from its first step. `already`: a workflow with this id was started before (by
   * the API or the reconciler; running or closed), which is as good.
   */
  startCreated(input: TaskWorkflowInput, timeoutMs: number): Promise<'started' | 'already'>;
  /** The first outcome of a task already started (its start update asked again). */
  firstOutcome(workflowId: string, timeoutMs: number): Promise<FirstOutcome>;
  snapshot(workflowId: string, timeoutMs: number): Promise<TaskObservation | null>;
  provideInput(workflowId: string, input: InputSignal): Promise<void>;
  /** Resolves once the upstream answered the cancel request (or refused it). */
  cancel(workflowId: string, timeoutMs: number): Promise<CancelOutcome>;
  /**
   * An approver's decision on a call waiting for approval (workflows/approval-gate.ts); rejects with the
   * workflow's reason when the request is no longer pending or this approver decided already.
   */
  decideApproval(workflowId: string, vote: ApprovalVote, timeoutMs: number): Promise<ApprovalAnswer>;
}

export class TemporalTaskEngine implements TaskEngine {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
  ) {}

  async start(input: TaskWorkflowInput, timeoutMs: number): Promise<FirstOutcome> {
    const type = input.approval
      ? APPROVAL_TASK_WORKFLOW_TYPE
      : input.hosted
        ? HOSTED_TASK_WORKFLOW_TYPE
        : TASK_WORKFLOW_TYPE;
    const op = new WithStartWorkflowOperation(type, {
      ...this.startOptions(input, 'starting'),
      // A task key is fresh random; a collision means a bug, never something to join.
      workflowIdConflictPolicy: 'FAIL',
    });
    return this.client.withDeadline(Date.now() + timeoutMs, () =>
      this.client.workflow.executeUpdateWithStart(startTaskUpdate, { startWorkflowOperation: op }),
    );
  }

  async startCreated(input: TaskWorkflowInput, timeoutMs: number): Promise<'started' | 'already'> {
    const status = input.carried?.observed.status ?? 'working';
    try {
      await this.client.withDeadline(Date.now() + timeoutMs, () =>
        this.client.workflow.start(TASK_WORKFLOW_TYPE, {
          ...this.startOptions(input, status),
          workflowIdConflictPolicy: 'FAIL',
          // Never again once closed: a second start (the reconciler after the API's) must not watch a
          // finished task anew.
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
        }),
      );
      return 'started';
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return 'already';
      throw err;
    }
  }

  private startOptions(input: TaskWorkflowInput, status: string) {
    return {
      workflowId: taskWorkflowId(input.taskKey),
      taskQueue: this.taskQueue,
      args: [input] as [TaskWorkflowInput],
      typedSearchAttributes: [
        { key: SA_PROJECT, value: input.projectSlug },
        { key: SA_UPSTREAM, value: input.upstream },
        { key: SA_TOOL, value: input.call.tool },
        { key: SA_CALLER_KIND, value: input.caller.kind },
        { key: SA_STATUS, value: status },
      ],
      staticSummary: `${plain(input.projectSlug)}: ${plain(input.upstream)} / ${plain(input.call.tool)}`,
      // Markdown in the Web UI. Metadata only: names, never arguments, ids or credentials.
      staticDetails: [
        `**MCP task** of project \`${plain(input.projectSlug)}\`${input.hosted ? ', hosted by the gateway (an ordinary tool call)' : ''}`,
        `- upstream: \`${plain(input.upstream)}\``,
        `- tool: \`${plain(input.call.tool)}\``,
        `- caller: ${input.caller.kind === 'api_key' ? 'API key' : plain(input.caller.kind)}`,
        `- created: ${plain(input.createdAt)}`,
      ].join('\n'),
    } satisfies Partial<WorkflowStartOptions>;
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

  async decideApproval(workflowId: string, vote: ApprovalVote, timeoutMs: number): Promise<ApprovalAnswer> {
    return this.client.withDeadline(Date.now() + timeoutMs, () =>
      this.client.workflow.getHandle(workflowId).executeUpdate(decideApprovalUpdate, { args: [vote] }),
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
