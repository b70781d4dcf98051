/**
 * The wait for approval (issue 27, docs/approvals.md), run by the hosted task workflow before anything
 * is sent: the request is opened and the task says what it waits for; approvers' decisions arrive as
 * updates (`decideApprovalUpdate`), each refused by the validator once the request is no longer pending
 * or from someone who already decided; a denial ends the wait at once, enough approvals let the call go
 * on; the request expires on a durable timer, and the caller's `tasks/cancel` withdraws it. The
 * workflow is the request's only writer, so races between approvers, the expiry and a cancel end in one
 * state. Who may decide is the API's check, made before the update (src/gateway/tasks/approval-desk.ts).
 */
import { condition, proxyLocalActivities, setCurrentDetails, setHandler } from '@temporalio/workflow';
import type { ApprovalActivities } from '../activities/approvals';
import type { JsonRpcErrorObject } from '../protocol';
import type { ApprovalDecision, ApprovalStatus } from '../store/tasks/approvals';
import type { ApprovalGate, TaskWorkflowInput } from './messages';
import { decideApprovalUpdate } from './messages';

const { openApproval, recordApproval, approvalWaiting, callerMayProceed } =
  proxyLocalActivities<ApprovalActivities>({
    startToCloseTimeout: '10 seconds',
    retry: { initialInterval: '200ms', maximumInterval: '10s' },
  });

/** Wire codes of the error table (src/protocol/errors.ts); workflow code does not import the table. */
const APPROVAL_DENIED = -31018;
const APPROVAL_NOT_GIVEN = -31019;

/**
 * Who a decision counts as. The instance administrator is one approver whichever way it decides: the
 * admin API (`admin:api`), the CLI (`admin:cli`), or any other channel (`admin:<via>`) names the same
 * person, and counting each as its own would let one holder of the admin token meet `required: 2` alone.
 * Users and keys are themselves (`user:<id>`, `api_key:<id>`).
 */
export function approverOf(by: string): string {
  return by === 'admin' || by.startsWith('admin:') ? 'admin' : by;
}

export type Verdict =
  | { kind: 'approved'; message: string }
  | { kind: 'refused'; status: 'failed' | 'cancelled'; message: string; error?: JsonRpcErrorObject };

/** Opens the request and records the task as waiting for it. */
async function openRequest(input: TaskWorkflowInput, gate: ApprovalGate): Promise<void> {
  await openApproval({
    id: gate.id,
    projectId: input.project,
    taskKey: input.taskKey,
    upstream: input.upstream,
    tool: input.call.tool,
    caller: input.caller,
    argsSha256: gate.argsSha256,
    policyVersion: gate.policyVersion,
    rule: gate.rule,
    createdAt: input.createdAt,
    expiresAt: gate.expiresAt,
    requestRef: input.call.requestRef,
  });
  await approvalWaiting({
    taskKey: input.taskKey,
    createdAt: input.createdAt,
    statusMessage: waitingMessage(input, gate, 0),
  });
}

/**
 * Opens the request, calls `opened` once the task says what it waits for (the client may get its handle
 * then), and waits for the verdict; `withdrawn` says whether the caller cancelled meanwhile. The decision
 * handler is set first: an approver may act as soon as the request is stored.
 */
export async function approvalGate(
  input: TaskWorkflowInput,
  gate: ApprovalGate,
  withdrawn: () => boolean,
  opened: () => void,
): Promise<Verdict> {
  let state: ApprovalStatus = 'pending';
  const decisions: ApprovalDecision[] = [];
  const approvals = () => decisions.filter((d) => d.decision === 'approve').length;
  // The request's writes run one after another, each with the state as of its own step: a later write
  // never lands before (nor is overwritten by a retry of) an earlier one.
  let writes: Promise<unknown> = Promise.resolve();
  const serial = (work: () => Promise<unknown>): Promise<unknown> => {
    const next = writes.then(work);
    writes = next.catch(() => undefined);
    return next;
  };
  const write = (by?: string) => {
    const record = {
      approvalId: gate.id,
      projectId: input.project,
      status: state,
      decisions: [...decisions],
      ...(by && { by }),
      at: new Date().toISOString(),
    };
    return serial(() => recordApproval(record));
  };

  setHandler(
    decideApprovalUpdate,
    async (vote) => {
      decisions.push({ ...vote, at: new Date().toISOString() });
      if (vote.decision === 'deny') state = 'denied';
      else if (approvals() >= gate.rule.required) state = 'approved';
      // The approver hears back once the decision is stored: the request's row and the audit trail.
      await write(vote.by);
      if (state === 'pending') {
        await serial(() =>
          state === 'pending'
            ? approvalWaiting({
                taskKey: input.taskKey,
                createdAt: input.createdAt,
                statusMessage: waitingMessage(input, gate, approvals()),
              })
            : Promise.resolve(),
        );
      }
      return { status: state, approvals: approvals(), required: gate.rule.required };
    },
    {
      validator: (vote) => {
        if (state !== 'pending') throw new Error(`The approval request is already ${state}`);
        // Workflow time: a decision that reaches a backlogged worker with the expiry timer loses to it.
        if (Date.now() >= Date.parse(gate.expiresAt))
          throw new Error('The approval request is already expired');
        if (withdrawn()) throw new Error('The approval request is already withdrawn');
        if (decisions.some((d) => approverOf(d.by) === approverOf(vote.by)))
          throw new Error('You already decided on this call');
      },
    },
  );

  await openRequest(input, gate);
  opened();
  // Operators see in the Temporal Web UI what the workflow waits for (no arguments, no names).
  setCurrentDetails(
    `Waiting for approval **${gate.id}** (policy version ${gate.policyVersion}, ${gate.rule.required} needed) until ${gate.expiresAt}: the decideApproval update ends the wait.`,
  );
  const waitMs = Math.max(0, Date.parse(gate.expiresAt) - Date.now());
  await condition(() => state !== 'pending' || withdrawn(), waitMs);
  if (state === 'pending') {
    state = withdrawn() ? 'withdrawn' : 'expired';
    await write();
  }
  // Every decision's write is done before the call goes on (or the task ends).
  await writes;
  if (state === 'withdrawn') {
    return {
      kind: 'refused',
      status: 'cancelled',
      message: 'Withdrawn by the caller while it waited for approval; nothing was sent to the upstream',
    };
  }
  if (state === 'expired') {
    const message = `Not approved before ${gate.expiresAt}: the approval request expired; nothing was sent to the upstream`;
    return { kind: 'refused', status: 'failed', message, error: { code: APPROVAL_NOT_GIVEN, message } };
  }
  const denial = decisions.find((d) => d.decision === 'deny');
  if (denial) {
    const message = `Denied by ${denial.byName}${denial.comment ? `: ${denial.comment}` : ''}; nothing was sent to the upstream`;
    return { kind: 'refused', status: 'failed', message, error: { code: APPROVAL_DENIED, message } };
  }
  // Approved, but the caller may have lost access meanwhile: then nothing goes upstream.
  if (!(await callerMayProceed({ projectId: input.project, principal: input.principal }))) {
    const message =
      'Approved, but the caller may no longer call this project (key revoked or access removed); nothing was sent to the upstream';
    return { kind: 'refused', status: 'failed', message, error: { code: APPROVAL_NOT_GIVEN, message } };
  }
  const names = decisions.filter((d) => d.decision === 'approve').map((d) => d.byName);
  const comment = decisions.find((d) => d.comment)?.comment;
  return {
    kind: 'approved',
    message: `Approved by ${names.join(', ')}${comment ? ` (${comment})` : ''}; calling the upstream`,
  };
}

function waitingMessage(input: TaskWorkflowInput, gate: ApprovalGate, given: number): string {
  const needs =
    gate.rule.required === 1
      ? 'an approval'
      : `${gate.rule.required - given} more of ${gate.rule.required} approvals`;
  return `Waiting for approval: ${input.call.tool} on ${input.upstream} needs ${needs} (request ${gate.id}, expires ${gate.expiresAt})`;
}
