/**
 * A project's approval policy in the store (issue 27, docs/approvals.md; the policy and its matching are
 * src/config/approvals.ts): JSON in `projects.approval_policy`, its version in `approval_version`. Every
 * change adds one to the version, a removal too, so a request asked under version n is never mistaken for
 * one asked under a later policy. Named approvers are resolved to ids when the policy is set (a user or
 * team renamed later stays the approver). Served with the project record, so every replica sees a change
 * at the next control-plane generation like any other setting.
 *
 * Also here: whether a principal may approve under a request's rule, checked against the rule the request
 * was asked under and the project's current policy both, so a policy change never widens who may approve.
 */
import type { ApprovalPolicy, ApprovalPolicyInput, VersionedApprovalPolicy } from '../../config/approvals';
import { ApprovalPolicySchema } from '../../config/approvals';
import type { ApproverRule } from '../tasks/approvals';
import type { ProjectsTable } from '../schema';
import { isTeamMember, requireManagedProject, requireTeam, requireUserRow } from './access';
import { auditBy } from './audit';
import type { Db, StoreContext } from './context';
import { ControlPlaneError } from './errors';
import type { Principal, ProjectRecord } from './types';

export interface ApprovalPolicyView {
  project: string;
  policy: ApprovalPolicy | null;
  version: number;
}

/** The served form of the project row's policy (undefined: none). */
export function approvalPolicyOf(row: ProjectsTable): VersionedApprovalPolicy | undefined {
  if (!row.approval_policy) return undefined;
  try {
    const parsed = ApprovalPolicySchema.safeParse(JSON.parse(row.approval_policy));
    return parsed.success ? { policy: parsed.data, version: Number(row.approval_version ?? 0) } : undefined;
  } catch {
    return undefined;
  }
}

export async function getPolicy(
  ctx: StoreContext,
  actor: Principal,
  ref: string,
): Promise<ApprovalPolicyView> {
  const row = await requireManagedProject(ctx, actor, ref);
  return view(row);
}

/** Sets (`input`) or removes (`null`) the policy; restating the stored policy changes nothing. */
export async function setPolicy(
  ctx: StoreContext,
  actor: Principal,
  ref: string,
  input: ApprovalPolicyInput | null,
): Promise<ApprovalPolicyView> {
  const row = await requireManagedProject(ctx, actor, ref);
  const policy = input === null ? null : await resolveApprovers(ctx.db, parsePolicy(input));
  const json = policy === null ? null : JSON.stringify(policy);
  if (json === (row.approval_policy ?? null)) return view(row);
  const version = Number(row.approval_version ?? 0) + 1;
  return ctx.transaction(async (trx) => {
    await trx
      .updateTable('projects')
      .set({ approval_policy: json, approval_version: version, updated_at: ctx.nowIso() })
      .where('id', '=', row.id)
      .execute();
    await auditBy(ctx, trx, actor, row.id, policy ? 'approval_policy.set' : 'approval_policy.removed', {
      version,
      ...(policy && { policy }),
    });
    return { project: row.slug, policy, version };
  });
}

function parsePolicy(input: ApprovalPolicyInput): ApprovalPolicy {
  const parsed = ApprovalPolicySchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const at = issue?.path.length ? ` → at ${issue.path.join('.')}` : '';
  throw new ControlPlaneError('invalid', `Invalid approval policy: ${issue?.message ?? 'invalid'}${at}`);
}

/** Users by id or handle, teams by id or slug, stored as ids; an unknown name is refused. */
async function resolveApprovers(db: Db, policy: ApprovalPolicy): Promise<ApprovalPolicy> {
  const users = await Promise.all(policy.approvers.users.map(async (u) => (await requireUserRow(db, u)).id));
  const teams = await Promise.all(policy.approvers.teams.map(async (t) => (await requireTeam(db, t)).id));
  return {
    ...policy,
    approvers: { ...policy.approvers, users: [...new Set(users)], teams: [...new Set(teams)] },
  };
}

function view(row: ProjectsTable): ApprovalPolicyView {
  const served = approvalPolicyOf(row);
  return { project: row.slug, policy: served?.policy ?? null, version: Number(row.approval_version ?? 0) };
}

/** The approver part of a policy, as stored with each request. */
export function approverRuleOf(policy: ApprovalPolicy): ApproverRule {
  return { ...policy.approvers, selfApproval: policy.selfApproval, required: policy.required };
}

/**
 * Whether `actor` may approve under `rule`: the administrator and the project's team when the rule names
 * managers, named users, members of named teams. Checked against the request's rule and the current
 * policy's both (the caller passes each): a change never widens, and an approver removed since loses the
 * right at once.
 */
export async function mayApproveUnder(
  db: Db,
  actor: Principal,
  project: Pick<ProjectRecord, 'teamId'>,
  rule: Pick<ApproverRule, 'managers' | 'users' | 'teams'>,
): Promise<boolean> {
  if (actor.kind === 'admin') return rule.managers;
  if (actor.kind !== 'user') return false;
  if (rule.users.includes(actor.userId)) return true;
  if (rule.managers && (await isTeamMember(db, actor.userId, project.teamId))) return true;
  for (const team of rule.teams) if (await isTeamMember(db, actor.userId, team)) return true;
  return false;
}

/** What the control-plane store offers of the above (ControlPlaneStore.approvalPolicies). */
export class ApprovalPolicies {
  constructor(private readonly ctx: StoreContext) {}

  get = (actor: Principal, project: string) => getPolicy(this.ctx, actor, project);
  set = (actor: Principal, project: string, policy: ApprovalPolicyInput | null) =>
    setPolicy(this.ctx, actor, project, policy);
  mayApprove = (actor: Principal, project: Pick<ProjectRecord, 'teamId'>, rule: ApproverRule) =>
    mayApproveUnder(this.ctx.db, actor, project, rule);

  /** Ids of projects whose current policy names the user (directly or by one of their teams). */
  async projectsNaming(userId: string): Promise<string[]> {
    const [rows, teams] = await Promise.all([
      this.ctx.db
        .selectFrom('projects')
        .select(['id', 'approval_policy', 'approval_version'])
        .where('approval_policy', 'is not', null)
        .execute(),
      this.ctx.db.selectFrom('team_members').select('team_id').where('user_id', '=', userId).execute(),
    ]);
    const mine = new Set(teams.map((t) => t.team_id));
    return rows
      .filter((r) => {
        const approvers = approvalPolicyOf(r as ProjectsTable)?.policy.approvers;
        return !!approvers && (approvers.users.includes(userId) || approvers.teams.some((t) => mine.has(t)));
      })
      .map((r) => r.id);
  }

  /** Who created a project API key (audit's actor form), if recorded (migration 0024). */
  async keyCreator(keyId: string): Promise<string | undefined> {
    const row = await this.ctx.db
      .selectFrom('api_keys')
      .select('created_by')
      .where('id', '=', keyId)
      .executeTakeFirst();
    return row?.created_by ?? undefined;
  }

  /** How a decision names its maker: the user's handle, or `administrator`. */
  async nameOf(actor: Principal): Promise<string> {
    if (actor.kind !== 'user') return actor.kind === 'admin' ? 'administrator' : actor.kind;
    const row = await this.ctx.db
      .selectFrom('users')
      .select('handle')
      .where('id', '=', actor.userId)
      .executeTakeFirst();
    return row?.handle ?? actor.userId;
  }
}
