/**
 * Approvals on the dashboard (issue 27, docs/approvals.md): the requests the viewer may see (those whose
 * policy names them as approvers, and their projects' managers), one request with its arguments (to its
 * approvers only), and Approve / Deny with a comment. Everything goes through the ApprovalDesk the admin
 * API uses (src/gateway/tasks/approval-desk.ts), which checks who may decide and audits every refusal; these
 * routes only say who asks (the signed-in user) and read the request.
 */
import type { ApprovalView } from '../../gateway/tasks/approval-desk';
import { parse } from '../../store/control-plane';
import type { Principal, ProjectRecord } from '../../store/control-plane/types';
import { approvalQuery, DecisionBody, requireDesk } from '../admin/approval-routes';
import type { DashboardApiDeps } from './routing';
import { ok, viewerRoute } from './routing';
import type { Viewer } from './session';
import type {
  ApprovalAnswerView,
  ApprovalDetailView,
  ApprovalPolicySummaryView,
  ApprovalRequestView,
  ApprovalsView,
} from './view-types';

const desk = (deps: DashboardApiDeps) => requireDesk(deps.approvals);

const principal = (viewer: Viewer): Principal => ({ kind: 'user', userId: viewer.user.id });
const approvalId = (params: string[]) => params[0] as string;

/** The requests with their user callers' handles (an API key or anonymous caller stays kind and id). */
async function withCallers(deps: DashboardApiDeps, views: ApprovalView[]): Promise<ApprovalRequestView[]> {
  const ids = views.filter((v) => v.caller.kind === 'user').map((v) => v.caller.id);
  const people = await deps.dashboard.usersByIds(ids);
  return views.map((v) => {
    const user = v.caller.kind === 'user' ? people.get(v.caller.id) : undefined;
    return user ? { ...v, caller: { ...v.caller, handle: user.handle } } : v;
  });
}

export const APPROVAL_ROUTES = [
  // `?status=pending|approved|denied|expired|withdrawn&project=<slug>&limit=&before=<createdAt>`
  viewerRoute('GET', '/v1/approvals', async (deps, req, viewer) => {
    const views = await desk(deps).list(principal(viewer), approvalQuery(req.query));
    return ok({ approvals: await withCallers(deps, views) } satisfies ApprovalsView);
  }),
  viewerRoute('GET', '/v1/approvals/:approval', async (deps, req, viewer) => {
    const view = await desk(deps).show(principal(viewer), approvalId(req.params));
    const [approval] = await withCallers(deps, [view]);
    return ok({ approval: approval ?? view } satisfies ApprovalDetailView);
  }),
  viewerRoute('POST', '/v1/approvals/:approval/approve', async (deps, req, viewer) => {
    const { comment } = parse(DecisionBody, req.body);
    const answer = await desk(deps).decide(principal(viewer), approvalId(req.params), 'approve', comment);
    return ok(answer satisfies ApprovalAnswerView);
  }),
  viewerRoute('POST', '/v1/approvals/:approval/deny', async (deps, req, viewer) => {
    const { comment } = parse(DecisionBody, req.body);
    const answer = await desk(deps).decide(principal(viewer), approvalId(req.params), 'deny', comment);
    return ok(answer satisfies ApprovalAnswerView);
  }),
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
