/**
 * Activities of a call waiting for approval (issue 27, docs/approvals.md; the waiting itself is
 * workflows/approval-gate.ts): open the request, record each decision and how it ended (the request's row
 * and the project's audit trail), keep the task's status message saying what it waits for, and check
 * that the caller may still call the project before an approved call is sent.
 */
import type { ApprovalDecision, ApprovalStatus, ApprovalStore, NewApproval } from '../store/tasks/approvals';
import type { AuditEvent, ControlPlane, Principal } from '../store/control-plane/types';
import type { TaskStore } from '../store/tasks/task-store';
import { recordWorking } from './hosted-status';

export interface ApprovalActivityDeps {
  approvals: ApprovalStore;
  store: TaskStore;
  controlPlane: Pick<ControlPlane, 'projectById' | 'canCallProject'> & {
    audit(event: AuditEvent): Promise<void>;
  };
  settings: { finishedTaskTtlMs?: number; maxStatusMessageChars?: number };
}

export interface RecordApprovalInput {
  approvalId: string;
  projectId: string;
  status: ApprovalStatus;
  decisions: ApprovalDecision[];
  /** The decision this write records (absent: the request expired or was withdrawn). */
  by?: string;
  at: string;
}

export interface ApprovalWaitingInput {
  taskKey: string;
  createdAt: string;
  statusMessage: string;
}

export function createApprovalActivities(deps: ApprovalActivityDeps) {
  return {
    /** Opens the request and says so on the project's trail (once: a retry finds the row). */
    async openApproval(input: NewApproval): Promise<void> {
      const known = await deps.approvals.get(input.id);
      if (known) return;
      // The trail first: a retry after a crash between the two writes repeats the record rather than
      // lose it (the row's presence is what says this step is done).
      await deps.controlPlane.audit({
        projectId: input.projectId,
        actor: `${input.caller.kind}:${input.caller.id}`,
        action: 'approval.requested',
        detail: {
          approvalId: input.id,
          upstream: input.upstream,
          tool: input.tool,
          argumentsSha256: input.argsSha256,
          policyVersion: input.policyVersion,
        },
      });
      await deps.approvals.open(input);
    },

    /** Writes the request's state and decisions; the audit record names what happened and who did it. */
    async recordApproval(input: RecordApprovalInput): Promise<void> {
      const before = await deps.approvals.get(input.approvalId);
      const last = input.by ? input.decisions.find((d) => d.by === input.by) : undefined;
      // The trail first, as in openApproval (repeated after a crash between the two writes, never lost);
      // skipped when a retried write finds its decision (or end) already in the row.
      const done = last ? before?.decisions.some((d) => d.by === last.by) : before?.status === input.status;
      if (!done) {
        await deps.controlPlane.audit({
          projectId: input.projectId,
          actor: last?.by ?? 'gateway',
          action: last
            ? `approval.${last.decision === 'approve' ? 'approved' : 'denied'}`
            : `approval.${input.status}`,
          detail: {
            approvalId: input.approvalId,
            status: input.status,
            // Comments are the approver's words about the call: kept on the request, not in the trail.
            ...(last?.comment !== undefined && { commented: true }),
          },
        });
      }
      await deps.approvals.record(input.approvalId, input.status, input.decisions, input.at);
    },

    /** The task `working` with what it waits for (not watch lag: nothing polls a call waiting for a person). */
    async approvalWaiting(input: ApprovalWaitingInput): Promise<void> {
      await recordWorking(deps, input, input.statusMessage);
    },

    /** Whether the caller may still call the project (a revoked key, a removed member may not). */
    async callerMayProceed(input: { projectId: string; principal: Principal }): Promise<boolean> {
      const project = await deps.controlPlane.projectById(input.projectId);
      return !!project && (await deps.controlPlane.canCallProject(input.principal, project));
    },
  };
}

export type ApprovalActivities = ReturnType<typeof createApprovalActivities>;
