/**
 * Approvals on the dashboard (issue 27, docs/approvals.md): the requests the viewer may see (those whose
 * policy names them as approvers, and their projects' managers), one request with its arguments (to its
 * approvers only), and Approve / Deny with a comment. Everything goes through the ApprovalDesk the admin
 * API uses (src/gateway/tasks/approval-desk.ts), which checks who may decide and audits every refusal.
 * List, show, approve and deny are the admin API's own operations (src/api/admin/operations/approvals.ts:
 * the same input, checks and desk call), run for the signed-in user; these routes add the callers' handles.
 */
import type { ApprovalView } from '../../gateway/tasks/approval-desk';
import type { ProjectRecord } from '../../store/control-plane/types';
import { APPROVAL_APPROVE, APPROVAL_DENY, APPROVAL_LIST, APPROVAL_SHOW } from '../admin/operations/approvals';
import type { DeskContext } from '../admin/operations/define';
import { invoke } from '../admin/operations/define';
import { bodyInput, queryInput } from '../admin/operations/http';
import type { DashboardApiDeps, Request } from './route';
import { ok, viewerRoute } from './route';
import type { Viewer } from './session';
import type {
  ApprovalAnswerView,
  ApprovalDetailView,
  ApprovalPolicySummaryView,
  ApprovalRequestView,
  ApprovalsView,
} from './view-types';

/** The desk's operations run for the signed-in user. */
const as = (deps: DashboardApiDeps, viewer: Viewer): DeskContext => ({
  actor: { kind: 'user', userId: viewer.user.id },
  deps: { ...(deps.approvals && { approvals: deps.approvals }) },
});
const approval = (params: string[]) => ({ approval: params[0] as string });

/** The requests with their user callers' handles (an API key or anonymous caller stays kind and id). */
async function withCallers(deps: DashboardApiDeps, views: ApprovalView[]): Promise<ApprovalRequestView[]> {
  const ids = views.filter((v) => v.caller.kind === 'user').map((v) => v.caller.id);
  const people = await deps.dashboard.usersByIds(ids);
  return views.map((v) => {
    const user = v.caller.kind === 'user' ? people.get(v.caller.id) : undefined;
    return user ? { ...v, caller: { ...v.caller, handle: user.handle } } : v;
  });
}

/** Approve or deny: the body (`{ comment }`) with the request named by the path. */
const decide =
  (operation: typeof APPROVAL_APPROVE) => async (deps: DashboardApiDeps, req: Request, viewer: Viewer) => {
    const answer = await invoke(operation, bodyInput(req.body, approval(req.params)), as(deps, viewer));
    return ok(answer satisfies ApprovalAnswerView);
  };

export const APPROVAL_ROUTES = [
  // `?status=pending|approved|denied|expired|withdrawn&project=<slug>&limit=&before=<createdAt>`
  viewerRoute('GET', '/v1/approvals', async (deps, req, viewer) => {
    const query = queryInput(APPROVAL_LIST.input, req.query);
    const views = await invoke(APPROVAL_LIST, query, as(deps, viewer));
    return ok({ approvals: await withCallers(deps, views) } satisfies ApprovalsView);
  }),
  viewerRoute('GET', '/v1/approvals/:approval', async (deps, req, viewer) => {
    const view = await invoke(APPROVAL_SHOW, approval(req.params), as(deps, viewer));
    const [shown] = await withCallers(deps, [view]);
    return ok({ approval: shown ?? view } satisfies ApprovalDetailView);
  }),
  viewerRoute('POST', '/v1/approvals/:approval/approve', decide(APPROVAL_APPROVE)),
  viewerRoute('POST', '/v1/approvals/:approval/deny', decide(APPROVAL_DENY)),
];

/**
 * The project's approval policy as its page shows it, read-only (set by the admin API, bootstrap or the
 * configuration file): which calls wait, who may approve (by handle and team slug), and its version.
 * Read from the project record every role already sees, so members learn why their call waits.
 */
export async function approvalPolicyView(
  deps: DashboardApiDeps,
  project: ProjectRecord,
): Promise<ApprovalPolicySummaryView | null> {
  const served = project.approvals;
  if (!served) return null;
  const { policy, version } = served;
  const [users, teams] = await Promise.all([
    deps.dashboard.usersByIds(policy.approvers.users),
    deps.dashboard.teamsByIds(policy.approvers.teams),
  ]);
  return {
    version,
    rules: policy.rules,
    approvers: {
      managers: policy.approvers.managers,
      // Someone removed since is shown by id: the policy still names them.
      users: policy.approvers.users.map((id) => users.get(id)?.handle ?? id),
      teams: policy.approvers.teams.map((id) => teams.get(id) ?? id),
    },
    selfApproval: policy.selfApproval,
    expiresAfterMs: policy.expiresAfterMs,
    required: policy.required,
  };
}
