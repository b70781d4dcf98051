/**
 * Where approvers act on calls waiting for approval (issue 27, docs/approvals.md): list, show (with the
 * call's arguments, to those who may approve it only), approve and deny. Shared by the admin API, the CLI
 * (as the instance administrator) and the dashboard, through the approval operations of
 * src/api/admin/operations/approvals.ts. Who may decide is checked here, against the rule the request was asked under and the
 * project's current policy both; whether the request is still open is the workflow's word (its update
 * validator). Every refusal is audited, and nothing reaches the upstream unless the workflow took the
 * approval.
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type {
  ApprovalDecision,
  ApprovalRecord,
  ApprovalStatus,
  ApprovalStore,
} from '../../store/tasks/approvals';
import type { ControlPlaneStore } from '../../store/control-plane';
import { actorId, ControlPlaneError } from '../../store/control-plane';
import { approverRuleOf } from '../../store/control-plane/approval-policies';
import type { Principal, ProjectRecord } from '../../store/control-plane/types';
import type { PayloadStore } from '../../store/tasks/payload-store';
import type { TaskEngine } from '../../temporal/task-engine';
import type { ApprovalAnswer, UpstreamCallPayload } from '../../workflows/messages';
import { taskWorkflowId } from '../../workflows/messages';
import { ProtocolError } from '../../protocol';

export interface ApprovalView {
  id: string;
  project: string;
  /** The task's key: the dashboard's link to the task. */
  taskKey: string;
  upstream: string;
  tool: string;
  caller: { kind: string; id: string };
  argumentsSha256: string;
  policyVersion: number;
  /** `expired` already when the request is past its expiry (the workflow's timer records it). */
  status: ApprovalStatus;
  required: number;
  createdAt: string;
  expiresAt: string;
  decidedAt: string | null;
  decisions: ApprovalDecision[];
  /** Whether the viewer may approve or deny it now. */
  mayDecide: boolean;
  /** The call's arguments: shown only to those who may approve it. */
  arguments?: unknown;
}

export interface ApprovalDeskDeps {
  approvals: ApprovalStore;
  controlPlane: ControlPlaneStore;
  engine: Pick<TaskEngine, 'decideApproval'>;
  payloads: PayloadStore;
}

export interface ApprovalQuery {
  project?: string;
  status?: ApprovalStatus;
  limit?: number;
  before?: string;
}

/** Longest comment on a decision (characters). */
export const COMMENT_MAX = 1000;

export class ApprovalDesk {
  constructor(private readonly deps: ApprovalDeskDeps) {}

  async list(actor: Principal, q: ApprovalQuery): Promise<ApprovalView[]> {
    const projects = await this.visibleProjects(actor, q.project);
    const rows = await this.deps.approvals.list({
      ...(actor.kind !== 'admin' || q.project ? { projectIds: [...projects.keys()] } : {}),
      ...(q.status && { status: q.status }),
      ...(q.before && { before: q.before }),
      limit: Math.min(Math.max(q.limit ?? 50, 1), 200),
    });
    const views = await Promise.all(
      rows.map(async (r) => {
        const project = projects.get(r.projectId) ?? (await this.deps.controlPlane.projectById(r.projectId));
        return project ? this.visibleView(actor, r, project, false) : undefined;
      }),
    );
    return views.filter((v): v is ApprovalView => v !== undefined);
  }

  async show(actor: Principal, id: string): Promise<ApprovalView> {
    const { record, project } = await this.find(id);
    const view = await this.visibleView(actor, record, project, true);
    if (!view) throw new ControlPlaneError('not_found', `No approval request "${id}"`);
    return view;
  }

  /** Approves or denies; the answer says where the request stands after it. */
  async decide(
    actor: Principal,
    id: string,
    decision: 'approve' | 'deny',
    comment: string | undefined,
  ): Promise<ApprovalAnswer> {
    if (comment !== undefined && comment.length > COMMENT_MAX)
      throw new ControlPlaneError('invalid', `"comment" is longer than ${COMMENT_MAX} characters`);
    if (decision === 'deny' && !comment?.trim())
      throw new ControlPlaneError('invalid', 'A denial needs a "comment": the caller is told why');
    const { record, project } = await this.find(id);
    const refuse = async (
      code: 'forbidden' | 'conflict' | 'not_found' | 'unavailable',
      reason: string,
      message: string,
    ) => {
      await this.deps.controlPlane.audit({
        projectId: record.projectId,
        actor: actorId(actor),
        action: 'approval.refused',
        detail: { approvalId: id, decision, reason },
      });
      return code === 'unavailable'
        ? new ProtocolError('TaskEngineUnavailable', message)
        : new ControlPlaneError(code, message);
    };
    // Someone who may not even see the request learns nothing of it (the attempt is on the trail).
    const standing = await this.standing(actor, record, project);
    if (!standing) throw await refuse('not_found', 'not_visible', `No approval request "${id}"`);
    if (standing !== 'approver')
      throw await refuse(
        'forbidden',
        'not_an_approver',
        'You may not decide on calls under this approval policy',
      );
    if (decision === 'approve' && (await this.isOwnCall(actor, record, project)))
      throw await refuse(
        'forbidden',
        'self_approval',
        'The approval policy does not let you approve your own call',
      );
    const status = this.statusOf(record);
    if (status !== 'pending')
      throw await refuse('conflict', status, `The approval request is already ${status}`);
    const vote = {
      by: actorId(actor),
      byName: await this.deps.controlPlane.approvalPolicies.nameOf(actor),
      decision,
      ...(comment?.trim() && { comment: comment.trim() }),
    };
    try {
      return await this.deps.engine.decideApproval(taskWorkflowId(record.taskKey), vote, 30_000);
    } catch (err) {
      // The validator's refusal (decided meanwhile, same approver twice), or the workflow is over.
      const reason = err instanceof WorkflowUpdateFailedError ? updateRefusal(err) : undefined;
      const now = await this.deps.approvals.get(id);
      const message =
        reason ??
        (now && now.status !== 'pending' ? `The approval request is already ${now.status}` : undefined);
      if (message) throw await refuse('conflict', 'not_pending', message);
      if ((err as Error).name === 'WorkflowNotFoundError') {
        // Its workflow closed without settling the request (an operator terminated it): the call can
        // never be sent. Settled here, so it leaves the pending lists instead of waiting for its expiry.
        await this.withdrawEnded(record);
        throw await refuse(
          'conflict',
          'call_ended',
          'The call this request was for has ended (its workflow is closed); nothing was sent, and the request is withdrawn',
        );
      }
      // No answer in time (workers busy or away): the decision may still be taken when they return.
      throw await refuse(
        'unavailable',
        'no_answer',
        'The decision could not be confirmed in time; it may still be taken: look at the request again before repeating it',
      );
    }
  }

  /** A pending request whose call ended without its workflow: withdrawn, and said so on the trail. */
  private async withdrawEnded(record: ApprovalRecord): Promise<void> {
    await this.deps.controlPlane.audit({
      projectId: record.projectId,
      actor: 'gateway',
      action: 'approval.withdrawn',
      detail: { approvalId: record.id, status: 'withdrawn', reason: 'call_ended' },
    });
    await this.deps.approvals.record(record.id, 'withdrawn', record.decisions, new Date().toISOString());
  }

  private async find(id: string): Promise<{ record: ApprovalRecord; project: ProjectRecord }> {
    const record = /^apr_[0-9a-f]{24}$/.test(id) ? await this.deps.approvals.get(id) : undefined;
    const project = record && (await this.deps.controlPlane.projectById(record.projectId));
    if (!record || !project) throw new ControlPlaneError('not_found', `No approval request "${id}"`);
    return { record, project };
  }

  /** Under the request's rule and, if the project still has a policy, under the current one too. */
  private async mayDecide(actor: Principal, r: ApprovalRecord, project: ProjectRecord): Promise<boolean> {
    const policies = this.deps.controlPlane.approvalPolicies;
    if (!(await policies.mayApprove(actor, project, r.rule))) return false;
    const current = project.approvals?.policy;
    return !current || policies.mayApprove(actor, project, approverRuleOf(current));
  }

  /**
   * A call the approver made: as the user who called, or with a project API key they created (migration
   * 0024; keys from before, and keys the administrator created, are nobody's). Refused when either the
   * request's policy version or the current one forbids self-approval. An anonymous caller is nobody
   * (docs/approvals.md).
   */
  private async isOwnCall(actor: Principal, r: ApprovalRecord, project: ProjectRecord): Promise<boolean> {
    const current = project.approvals?.policy;
    if (r.rule.selfApproval && (current === undefined || current.selfApproval)) return false;
    if (r.caller.kind === 'user') return actor.kind === 'user' && r.caller.id === actor.userId;
    if (r.caller.kind !== 'api_key') return false;
    const creator = await this.deps.controlPlane.approvalPolicies.keyCreator(r.caller.id);
    // Keys the administrator provisioned (bootstrap, API, CLI) are nobody's own: the administrator can
    // change any policy anyway, audited; a user's key is that user's.
    return creator !== undefined && creator.startsWith('user:') && creator === actorId(actor);
  }

  private statusOf(r: ApprovalRecord): ApprovalStatus {
    return r.status === 'pending' && Date.parse(r.expiresAt) <= Date.now() ? 'expired' : r.status;
  }

  /** Projects whose requests the actor may see: managed ones and those whose policy names them. */
  private async visibleProjects(actor: Principal, only?: string): Promise<Map<string, ProjectRecord>> {
    const cp = this.deps.controlPlane;
    const out = new Map<string, ProjectRecord>();
    if (only) {
      const project = await cp.projectBySlug(only);
      if (project) out.set(project.id, project);
      return out;
    }
    if (actor.kind !== 'user') return out;
    const managed = (await cp.listProjects(actor)).map((p) => p.id);
    const naming = await cp.approvalPolicies.projectsNaming(actor.userId);
    for (const id of new Set([...managed, ...naming])) {
      const project = await cp.projectById(id);
      if (project) out.set(project.id, project);
    }
    return out;
  }

  /** An approver of the request, one of its project's managers (who see it without deciding), or neither. */
  private async standing(
    actor: Principal,
    r: ApprovalRecord,
    project: ProjectRecord,
  ): Promise<'approver' | 'manager' | undefined> {
    if (await this.mayDecide(actor, r, project)) return 'approver';
    return (await this.deps.controlPlane.canManageProject(actor, project)) ? 'manager' : undefined;
  }

  /**
   * The request as `actor` may see it: those who may approve it see it with its arguments, the project's
   * managers without them; anyone else not at all (undefined).
   */
  private async visibleView(
    actor: Principal,
    r: ApprovalRecord,
    project: ProjectRecord,
    withArgs: boolean,
  ): Promise<ApprovalView | undefined> {
    const standing = await this.standing(actor, r, project);
    if (!standing) return undefined;
    const approver = standing === 'approver';
    const mayDecide = approver && this.statusOf(r) === 'pending';
    const view: ApprovalView = {
      id: r.id,
      project: project.slug,
      taskKey: r.taskKey,
      upstream: r.upstream,
      tool: r.tool,
      caller: r.caller,
      argumentsSha256: r.argsSha256,
      policyVersion: r.policyVersion,
      status: this.statusOf(r),
      required: r.rule.required,
      createdAt: r.createdAt,
      expiresAt: r.expiresAt,
      decidedAt: r.decidedAt,
      decisions: r.decisions,
      mayDecide,
    };
    if (withArgs && approver) {
      const request = await this.deps.payloads.get<UpstreamCallPayload>(r.requestRef, r.taskKey, 'request');
      view.arguments = request?.arguments ?? {};
    }
    return view;
  }
}

function updateRefusal(err: WorkflowUpdateFailedError): string | undefined {
  const cause = err.cause as { message?: unknown } | undefined;
  return typeof cause?.message === 'string' && cause.message ? cause.message : undefined;
}
