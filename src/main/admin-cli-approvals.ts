/**
 * The admin CLI's approval commands (issue 27, docs/approvals.md): a project's approval policy (get, set
 * from a file or inline JSON, remove) and the requests waiting for approval (list, show, approve, deny).
 * They are the admin API's operations (src/api/admin/approval-routes.ts) run by the instance
 * administrator: the policy through the control-plane store, the requests through the approval desk
 * (src/gateway/tasks/approval-desk.ts), whose approve and deny reach the task's workflow through Temporal.
 * The administrator decides as the project's managers do: only where the policy names `managers`.
 */
import { readFileSync } from 'node:fs';
import { approvalQuery } from '../api/admin/approval-routes';
import { HttpError } from '../api/rest-errors';
import type { ApprovalPolicyInput } from '../config/approvals';
import type { ApprovalDesk } from '../gateway/tasks/approval-desk';
import type { ControlPlaneStore } from '../store/control-plane';
import type { Principal } from '../store/control-plane/types';
import { json, need, parseFlags, UsageError } from './admin-cli-flags';
import type { Flags } from './admin-cli-flags';

export const APPROVAL_USAGE = `  approvals list [--project P] [--status S] [--limit N] [--before ISO]
  approvals show ID                          approvals approve ID [--comment C]
  approvals deny ID --comment C              (approve and deny need Temporal: temporal.address)
  approval-policy get P                      approval-policy remove P
  approval-policy set P --file F | --policy JSON   (replaces the policy; its version goes up)
`;

export const APPROVAL_NOUNS = ['approvals', 'approval-policy'] as const;

/** `approvals <verb> [ID] [--flag value ...]`, `approval-policy <verb> P [...]`: the result to print. */
export async function runApprovalCommand(
  cp: ControlPlaneStore,
  desk: ApprovalDesk | undefined,
  noun: string,
  verb: string | undefined,
  rest: string[],
  knownFlags: readonly string[],
): Promise<unknown> {
  const admin: Principal = { kind: 'admin', via: 'cli' };
  // The request or project is the one argument before the flags.
  const [ref, flagArgs] =
    rest[0] !== undefined && !rest[0].startsWith('--') ? [rest[0], rest.slice(1)] : [undefined, rest];
  const flags = parseFlags(flagArgs, knownFlags);
  const named = (what: string) => {
    if (ref === undefined || ref === '') throw new UsageError(`${noun} ${verb ?? ''}: which ${what}?`);
    return ref;
  };
  const approvals = () => {
    if (!desk) throw new UsageError('approvals need the store and Temporal of a configured gateway');
    return desk;
  };
  switch (`${noun} ${verb ?? ''}`) {
    case 'approvals list':
      if (ref !== undefined) throw new UsageError(`Unexpected argument "${ref}"`);
      return approvals().list(admin, listQuery(flags));
    case 'approvals show':
      return approvals().show(admin, named('approval request'));
    case 'approvals approve':
    case 'approvals deny': {
      const id = named('approval request');
      const decision = verb === 'approve' ? 'approve' : 'deny';
      const comment = decision === 'deny' ? need(flags, 'comment') : flags.get('comment');
      return { id, ...(await approvals().decide(admin, id, decision, comment)) };
    }
    case 'approval-policy get':
      return cp.approvalPolicies.get(admin, named('project'));
    case 'approval-policy set':
      return cp.approvalPolicies.set(admin, named('project'), policyInput(flags));
    case 'approval-policy remove':
      return cp.approvalPolicies.set(admin, named('project'), null);
  }
  throw new UsageError(`Unknown command "${[noun, verb, ...rest].join(' ')}"`);
}

/** The listing's filters, checked as the admin API checks its query string. */
function listQuery(flags: Flags) {
  const query = new URLSearchParams();
  for (const name of ['project', 'status', 'limit', 'before']) {
    const v = flags.get(name);
    if (v !== undefined) query.set(name, v);
  }
  try {
    return approvalQuery(query);
  } catch (err) {
    if (err instanceof HttpError) throw new UsageError(err.message.replace(/^"(\w+)"/, '--$1'));
    throw err;
  }
}

/** `--file F` (a JSON file) or `--policy JSON`, exactly one; checked by the control plane like the API's body. */
function policyInput(flags: Flags): ApprovalPolicyInput {
  const file = flags.get('file');
  if ((file === undefined) === (flags.get('policy') === undefined))
    throw new UsageError('approval-policy set needs --file F or --policy JSON (one of them)');
  const parsed = file === undefined ? json(flags, 'policy') : jsonFile(file);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new UsageError('The approval policy must be a JSON object');
  return parsed as ApprovalPolicyInput;
}

function jsonFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`--file: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UsageError('--file must be JSON');
  }
}
