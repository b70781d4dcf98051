/**
 * Calls waiting for approval (issue 27, docs/approvals.md, migration 0023): one row per call, bound to
 * its caller, upstream, tool, the SHA-256 of its canonical arguments and the policy version it was asked
 * under. The approval's workflow (workflows/approval-gate.ts) is the only writer after the row is opened:
 * it decides, so two approvers racing, an approval racing the expiry and a retried activity all end in one
 * consistent row. Readers (admin API, dashboard) only list and show.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../schema';

export const APPROVAL_STATUSES = ['pending', 'approved', 'denied', 'expired', 'withdrawn'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** Who may approve, as the policy said at the request's version (stored with the request). */
export interface ApproverRule {
  managers: boolean;
  users: string[];
  teams: string[];
  selfApproval: boolean;
  required: number;
}

export interface ApprovalDecision {
  /** `user:<id>` or `admin:<via>` (audit's actor form). */
  by: string;
  /** Display name of who decided (handle or e-mail), for the caller's error and the dashboard. */
  byName: string;
  decision: 'approve' | 'deny';
  comment?: string;
  at: string;
}

export interface ApprovalRecord {
  id: string;
  projectId: string;
  taskKey: string;
  upstream: string;
  tool: string;
  caller: { kind: string; id: string };
  argsSha256: string;
  policyVersion: number;
  rule: ApproverRule;
  status: ApprovalStatus;
  createdAt: string;
  expiresAt: string;
  decidedAt: string | null;
  decisions: ApprovalDecision[];
  requestRef: string;
}

export type NewApproval = Omit<ApprovalRecord, 'status' | 'decidedAt' | 'decisions'>;

export interface ApprovalFilter {
  /** Only these projects (the caller's visible ones); undefined: all (the administrator). */
  projectIds?: string[];
  status?: ApprovalStatus;
  limit: number;
  /** `created_at` of the last row of the previous page. */
  before?: string;
}

export class ApprovalStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Opens the request (again: a retried activity finds it there and changes nothing). */
  async open(a: NewApproval): Promise<void> {
    await this.db
      .insertInto('approvals')
      .values({
        id: a.id,
        project_id: a.projectId,
        task_key: a.taskKey,
        upstream: a.upstream,
        tool: a.tool,
        caller_kind: a.caller.kind,
        caller_id: a.caller.id,
        args_sha256: a.argsSha256,
        policy_version: a.policyVersion,
        policy: JSON.stringify(a.rule),
        status: 'pending',
        created_at: a.createdAt,
        expires_at: a.expiresAt,
        decided_at: null,
        decisions: '[]',
        request_ref: a.requestRef,
      })
      .onConflict((oc) => oc.column('task_key').doNothing())
      .execute();
  }

  async get(id: string): Promise<ApprovalRecord | undefined> {
    const row = await this.db.selectFrom('approvals').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async list(f: ApprovalFilter): Promise<ApprovalRecord[]> {
    if (f.projectIds?.length === 0) return [];
    let q = this.db.selectFrom('approvals').selectAll();
    if (f.projectIds) q = q.where('project_id', 'in', f.projectIds);
    if (f.status) q = q.where('status', '=', f.status);
    if (f.before) q = q.where('created_at', '<', f.before);
    const rows = await q.orderBy('created_at', 'desc').orderBy('id').limit(f.limit).execute();
    return rows.map(toRecord);
  }

  /**
   * Records the decisions so far and the status they lead to (the workflow's word). Written whole, so a
   * retried write is the same write.
   */
  async record(id: string, status: ApprovalStatus, decisions: ApprovalDecision[], at: string): Promise<void> {
    await this.db
      .updateTable('approvals')
      .set({
        status,
        decisions: JSON.stringify(decisions),
        decided_at: status === 'pending' ? null : at,
      })
      .where('id', '=', id)
      .execute();
  }

  /** Requests waiting, per project slug and upstream alias (`taskrouter_approvals_pending`). */
  async pendingByUpstream(): Promise<Array<{ project: string; upstream: string; waiting: number }>> {
    const rows = await this.db
      .selectFrom('approvals')
      .innerJoin('projects', 'projects.id', 'approvals.project_id')
      .select((eb) => [
        'projects.slug as project',
        'approvals.upstream as upstream',
        eb.fn.countAll<number | string>().as('waiting'),
      ])
      .where('approvals.status', '=', 'pending')
      .groupBy(['projects.slug', 'approvals.upstream'])
      .execute();
    return rows.map((r) => ({ project: r.project, upstream: r.upstream, waiting: Number(r.waiting) }));
  }
}

function toRecord(r: Database['approvals']): ApprovalRecord {
  return {
    id: r.id,
    projectId: r.project_id,
    taskKey: r.task_key,
    upstream: r.upstream,
    tool: r.tool,
    caller: { kind: r.caller_kind, id: r.caller_id },
    argsSha256: r.args_sha256,
    policyVersion: Number(r.policy_version),
    rule: JSON.parse(r.policy) as ApproverRule,
    status: r.status as ApprovalStatus,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    decidedAt: r.decided_at,
    decisions: JSON.parse(r.decisions) as ApprovalDecision[],
    requestRef: r.request_ref,
  };
}
