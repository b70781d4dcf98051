/**
 * Approvals in the admin API (issue 27, docs/approvals.md): a project's approval policy (read, set,
 * remove), and the requests waiting for approval (list, show, approve, deny). The CLI and the dashboard's
 * own routes share the desk (src/gateway/tasks/approval-desk.ts) and this query parsing.
 */
import { z } from 'zod';
import type { ApprovalPolicyInput } from '../../config/approvals';
import type { ApprovalDesk } from '../../gateway/tasks/approval-desk';
import { COMMENT_MAX } from '../../gateway/tasks/approval-desk';
import { parse } from '../../store/control-plane';
import type { ApprovalStatus } from '../../store/tasks/approvals';
import { APPROVAL_STATUSES } from '../../store/tasks/approvals';
import { HttpError } from '../rest-errors';
import type { AdminHandler, AdminRequest } from './route';
import { adminRoute } from './route';

type Request = AdminRequest;
const route = (method: string, pattern: string, handler: AdminHandler<{ approvals?: ApprovalDesk }>) =>
  adminRoute(method, pattern, handler);

export const DecisionBody = z.strictObject({ comment: z.string().max(COMMENT_MAX).optional() });

/** The desk, or 503 where this process has no task engine to reach the requests' workflows. */
export function requireDesk<D extends Pick<ApprovalDesk, 'list' | 'show' | 'decide'>>(
  approvals: D | undefined,
): D {
  if (!approvals) throw new HttpError('unavailable', 'Approvals need the task engine (Temporal)', 503);
  return approvals;
}
const desk = (deps: { approvals?: ApprovalDesk }) => requireDesk(deps.approvals);

/** `?status=&project=&limit=&before=` of a listing. */
export function approvalQuery(query: URLSearchParams) {
  const status = query.get('status');
  if (status !== null && !(APPROVAL_STATUSES as readonly string[]).includes(status))
    throw new HttpError('invalid', `"status" must be one of ${APPROVAL_STATUSES.join(', ')}`);
  const limit = query.get('limit');
  if (limit !== null && !/^\d{1,3}$/.test(limit)) throw new HttpError('invalid', '"limit" must be a number');
  const project = query.get('project');
  const before = query.get('before');
  return {
    ...(status !== null && { status: status as ApprovalStatus }),
    ...(limit !== null && { limit: Number(limit) }),
    ...(project !== null && { project }),
    ...(before !== null && { before }),
  };
}

const id = (r: Request) => r.params[0] as string;

export const APPROVAL_ROUTES = [
  route('GET', '/projects/:project/approval-policy', async (cp, r) => ({
    body: await cp.approvalPolicies.get(r.actor, id(r)),
  })),
  route('PUT', '/projects/:project/approval-policy', async (cp, r) => ({
    body: await cp.approvalPolicies.set(r.actor, id(r), r.body as ApprovalPolicyInput),
  })),
  route('DELETE', '/projects/:project/approval-policy', async (cp, r) => ({
    body: await cp.approvalPolicies.set(r.actor, id(r), null),
  })),
  route('GET', '/approvals', async (_cp, r, deps) => ({
    body: { approvals: await desk(deps).list(r.actor, approvalQuery(r.query)) },
  })),
  route('GET', '/approvals/:approval', async (_cp, r, deps) => ({
    body: await desk(deps).show(r.actor, id(r)),
  })),
  route('POST', '/approvals/:approval/approve', async (_cp, r, deps) => {
    const { comment } = parse(DecisionBody, r.body);
    return { body: await desk(deps).decide(r.actor, id(r), 'approve', comment) };
  }),
  route('POST', '/approvals/:approval/deny', async (_cp, r, deps) => {
    const { comment } = parse(DecisionBody, r.body);
    return { body: await desk(deps).decide(r.actor, id(r), 'deny', comment) };
  }),
];
