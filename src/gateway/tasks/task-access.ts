/**
 * Who may do what with a task on the dashboard: the roles table of docs/dashboard.md as one pure
 * function. Metadata and timelines are for everyone with a role on the project; assignment is a
 * team-level mutation; payloads and the protocol controls (answer input, cancel) belong to the user who
 * started the task, and only while their upstream authorization stays valid. Tasks started with an API
 * key (or anonymously) show no payload and no controls to anyone. Assignment grants nothing here.
 */
import type { TaskStatus } from '../../protocol';
import { TERMINAL_TASK_STATUSES } from '../../protocol';
import type { ProjectRole } from '../../store/sessions/dashboard-store';
import type { Caller } from '../../store/tasks/task-store';

export type PayloadDenial = 'api_key' | 'anonymous' | 'not_caller' | 'authorization_invalid' | 'expired';

export interface TaskAccessInput {
  /** The viewer's role on the task's project (a viewer without one never gets this far). */
  role: ProjectRole;
  viewerUserId: string;
  caller: Caller;
  status: TaskStatus;
  /** False once the upstream authorization the task started with is revoked or expired. */
  authorizationValid: boolean;
  payloadExpired: boolean;
}

export interface TaskAccess {
  assign: boolean;
  /** The Temporal Web UI link: operators' detail, for team members. */
  workflowLink: boolean;
  payload: { visible: true } | { visible: false; reason: PayloadDenial; message: string };
  /** Answering a pending form elicitation (also needs the task to be `input_required`). */
  answer: boolean;
  cancel: boolean;
}

const DENIAL_MESSAGES: Record<PayloadDenial, string> = {
  api_key: 'This task was started with an API key: its inputs and results are never shown in the dashboard.',
  anonymous: 'This task was started anonymously: its inputs and results are never shown in the dashboard.',
  not_caller: 'Only the user who started this task can see its inputs and results.',
  authorization_invalid:
    'The upstream authorization this task was started with is no longer valid: its inputs and results are hidden and it can no longer be controlled from here.',
  expired: 'The payload has expired (payloads are kept 24 hours); the metadata stays until it is purged.',
};

export function taskAccess(input: TaskAccessInput): TaskAccess {
  const team = input.role === 'team';
  const ownsTask = input.caller.kind === 'user' && input.caller.id === input.viewerUserId;
  const denial = payloadDenial(input, ownsTask);
  // Controls follow the same rules as payloads, except that an expired payload (a finished task) is
  // not a reason of its own: there is nothing left to control then anyway.
  const controllable = ownsTask && input.authorizationValid && !TERMINAL_TASK_STATUSES.has(input.status);
  return {
    assign: team,
    workflowLink: team,
    payload: denial
      ? { visible: false, reason: denial, message: DENIAL_MESSAGES[denial] }
      : { visible: true },
    answer: controllable && input.status === 'input_required',
    cancel: controllable,
  };
}

function payloadDenial(input: TaskAccessInput, ownsTask: boolean): PayloadDenial | undefined {
  if (input.caller.kind === 'api_key') return 'api_key';
  if (input.caller.kind !== 'user') return 'anonymous';
  if (!ownsTask) return 'not_caller';
  if (!input.authorizationValid) return 'authorization_invalid';
  if (input.payloadExpired) return 'expired';
  return undefined;
}
