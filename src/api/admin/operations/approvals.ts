/**
 * Approvals (issue 27, docs/approvals.md): a project's approval policy (read, set, remove) through the
 * control plane, and the requests waiting for approval (list, show, approve, deny) through the approval
 * desk (src/gateway/tasks/approval-desk.ts). The dashboard's own routes run the desk's four operations.
 */
import { z } from 'zod';
import type { ApprovalPolicyInput } from '../../../config/approvals';
import type { ApprovalDesk } from '../../../gateway/tasks/approval-desk';
import { COMMENT_MAX } from '../../../gateway/tasks/approval-desk';
import { APPROVAL_STATUSES } from '../../../store/tasks/approvals';
import { HttpError } from '../../rest-errors';
import { policyGroup } from './cli-groups';
import type { DeskContext } from './define';
import { limitSchema, ref } from './define';
import { rest } from './rest';

/** The desk, or 503 where this process has no task engine to reach the requests' workflows. */
export function requireDesk<D extends Pick<ApprovalDesk, 'list' | 'show' | 'decide'>>(
  approvals: D | undefined,
): D {
  if (!approvals) throw new HttpError('unavailable', 'Approvals need the task engine (Temporal)', 503);
  return approvals;
}

const approvals = rest({
  name: 'approval',
  plural: 'approvals',
  path: '/approvals',
  item: 'approval',
  cli: 'approvals',
});

const project = { key: 'project', meta: 'P', what: 'project' } as const;
const request = { key: 'approval', meta: 'ID', what: 'approval request' } as const;

function decision(vote: 'approve' | 'deny') {
  return approvals.action({
    verb: vote,
    who: 'approvers',
    audit: `approval.${vote === 'approve' ? 'approved' : 'denied'} (approval.refused when refused)`,
    input: z.strictObject({ approval: ref, comment: z.string().max(COMMENT_MAX).optional() }),
    run: ({ approval, comment }, { actor, deps }: DeskContext) =>
      requireDesk(deps.approvals).decide(actor, approval, vote, comment),
    cli: {
      positional: request,
      // A denial says why: the API answers 400 without a comment, the CLI asks for it.
      flags: { comment: { required: vote === 'deny' } },
      ...(vote === 'deny' && { note: '(approve and deny need Temporal: temporal.address)' }),
      print: (result, { approval }) => ({ id: approval, ...result }),
    },
  });
}

export const APPROVAL_LIST = approvals.list({
  who: 'admin: all; user: projects they manage or whose policy names them',
  input: z.object({
    project: z.string().optional(),
    status: z
      .enum(APPROVAL_STATUSES, { error: `"status" must be one of ${APPROVAL_STATUSES.join(', ')}` })
      .optional(),
    limit: limitSchema(3),
    before: z.string().optional(),
  }),
  run: (query, { actor, deps }: DeskContext) => requireDesk(deps.approvals).list(actor, query),
  cli: { flags: { status: { meta: 'S' }, before: { meta: 'ISO' } } },
});

export const APPROVAL_SHOW = approvals.show({
  who: 'approvers (with arguments), managers (without)',
  run: ({ approval }, { actor, deps }: DeskContext) => requireDesk(deps.approvals).show(actor, approval),
  cli: { positional: request },
});

export const APPROVAL_APPROVE = decision('approve');
export const APPROVAL_DENY = decision('deny');

/** A project's approval policy: one resource, replaced whole. */
const approvalPolicy = rest({
  name: 'approvalPolicy',
  path: '/projects/:project/approval-policy',
  cli: 'approval-policy',
});

export const APPROVAL_OPERATIONS = [
  approvalPolicy.show({
    verb: 'get',
    who: 'managers',
    run: ({ project }, { cp, actor }) => cp.approvalPolicies.get(actor, project),
    cli: { positional: project },
  }),
  approvalPolicy.update({
    verb: 'set',
    who: 'managers',
    audit: 'approval_policy.set',
    input: z.object({ project: ref, policy: z.record(z.string(), z.unknown()) }),
    run: ({ project, policy }, { cp, actor }) =>
      cp.approvalPolicies.set(actor, project, policy as ApprovalPolicyInput),
    http: { method: 'PUT', bodyKey: 'policy' },
    cli: { positional: project, groups: [policyGroup], note: '(replaces the policy; its version goes up)' },
  }),
  approvalPolicy.remove({
    who: 'managers',
    audit: 'approval_policy.removed',
    run: ({ project }, { cp, actor }) => cp.approvalPolicies.set(actor, project, null),
    cli: { positional: project },
  }),
  APPROVAL_LIST,
  APPROVAL_SHOW,
  APPROVAL_APPROVE,
  APPROVAL_DENY,
];
