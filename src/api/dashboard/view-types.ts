/**
 * The JSON the dashboard API returns, one type per view: the routes (`*-routes.ts`, views.ts, sso.ts)
 * check what they send against these with `satisfies` or a return type, and the browser UI (ui/, its own
 * tsconfig with the DOM library) reads them with `import type`, so a shape changed on one side and not
 * on the other fails `npm run typecheck`. Types only and no imports: the UI's compilation takes this file
 * and nothing of the server with it.
 */

/** A task's status (protocol TASK_STATUSES); the UI labels `input_required` "Waiting for input". */
export type TaskStatusView = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** The task list's groups (store TASK_GROUPS). */
export type TaskGroupView = 'all' | 'pending' | 'completed' | 'failed' | 'cancelled';

/** A user as others see them. */
export interface PersonView {
  handle: string;
  name: string;
}

/** The signed-in user. */
export interface UserView extends PersonView {
  id: string;
}

/** `GET /v1/session` (no CSRF token for a bearer-token viewer) and `POST /v1/session`. */
export interface SessionView {
  user: UserView;
  csrfToken?: string;
}

/** `GET /v1/session/sso`: the sign-in button's label, when the gateway offers its OpenID issuer. */
export interface SsoView {
  label: string;
}

// ── projects ──────────────────────────────────────────────────────────────────────────────────────

export type ProjectRoleView = 'team' | 'member';

/** `GET /v1/projects`: the viewer's projects. */
export interface ProjectsView {
  projects: Array<{ slug: string; team: string; role: ProjectRoleView }>;
}

/** An upstream as the project's members see it (views.ts, upstreamStatusView). */
export interface UpstreamStatusView {
  alias: string;
  enabled: boolean;
  era: string | null;
  protocolVersion: string | null;
  probedAt: string | null;
  problem: string | null;
  /** How a call's credential comes about (views.ts, credentialsOf). */
  credentials: string;
}

/** A project's approval policy, read-only (approval-routes.ts, approvalPolicyView). */
export interface ApprovalPolicySummaryView {
  version: number;
  rules: Array<{ upstream: string; tools: string[]; annotations: string[] }>;
  approvers: { managers: boolean; users: string[]; teams: string[] };
  selfApproval: boolean;
  expiresAfterMs: number;
  required: number;
}

/** `GET /v1/projects/:project`. */
export interface ProjectView {
  project: { slug: string; role: ProjectRoleView };
  viewer: UserView;
  people: PersonView[];
  upstreams: UpstreamStatusView[];
  approvalPolicy: ApprovalPolicySummaryView | null;
}

/** One of the viewer's connections to a per-user upstream. */
export interface ConnectionView {
  alias: string;
  status: string;
  expiresAt: string | null;
  registration: string | null;
  connectUrl: string;
}

/** `GET /v1/projects/:project/connections`. */
export interface ConnectionsView {
  connections: ConnectionView[];
}

/** `DELETE /v1/projects/:project/connections/:alias`. */
export interface ConnectionRevokedView {
  connection: { alias: string; status: string };
}

// ── tasks ─────────────────────────────────────────────────────────────────────────────────────────

/** Who started a task: a user (null when unknown) or just the kind of caller. */
export type CallerView = { kind: 'user'; user: PersonView | null } | { kind: string; user?: undefined };

/** A task in a list (views.ts, taskSummaryView). */
export interface TaskSummaryView {
  ref: string;
  tool: string;
  upstream: string;
  caller: CallerView;
  status: TaskStatusView;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  assignee: PersonView | null;
  hosted: boolean;
}

/** `GET /v1/projects/:project/tasks`: a page of tasks and the counts of every group. */
export interface TaskListView {
  group: TaskGroupView;
  assigned: string;
  hosted: boolean;
  counts: Record<TaskGroupView, number>;
  tasks: TaskSummaryView[];
  nextCursor?: string;
}

/** A task's metadata on its page (views.ts, taskMetadataView). */
export interface TaskMetadataView extends TaskSummaryView {
  ttlMs: number | null;
  payloadExpired: boolean;
}

/** One line of a task's timeline. */
export type TimelineEntryView =
  | { at: string; kind: 'assignment'; by: PersonView | null; assignee: PersonView | null }
  | { at: string; kind: 'status'; status: TaskStatusView; statusMessage?: string };

/** An open input request (elicitation), relayed as the upstream sent it. */
export interface InputRequestView {
  method: string;
  params?: Record<string, unknown>;
  [key: string]: unknown;
}

/** Why a task's inputs and results are hidden (gateway task-access.ts, PayloadDenial). */
export type PayloadDenialView = 'api_key' | 'anonymous' | 'not_caller' | 'authorization_invalid' | 'expired';

/** A task's inputs and results, or why they are hidden. */
export type PayloadView =
  | {
      visible: true;
      arguments?: unknown;
      inputRequests?: Record<string, InputRequestView>;
      result?: Record<string, unknown>;
      error?: { code: number; message: string; data?: unknown };
    }
  | { visible: false; reason: PayloadDenialView; message: string };

/** `GET /v1/projects/:project/tasks/:task`. */
export interface TaskDetailView {
  task: TaskMetadataView;
  timeline: TimelineEntryView[];
  payload: PayloadView;
  controls: { assign: boolean; cancel: boolean; answer: boolean };
  workflow?: { id: string; url?: string };
}

/** `GET /v1/projects/:project/tasks/:task/timeline`. */
export interface TimelineView {
  timeline: TimelineEntryView[];
}

/** `GET /v1/projects/:project/tasks/:task/payload` (only when visible). */
export interface TaskPayloadView {
  payload: PayloadView;
}

/** `POST /v1/projects/:project/tasks/:task/input` (202). */
export interface InputAcceptedView {
  accepted: string[];
}

/** `POST /v1/projects/:project/tasks/:task/cancel` (202). */
export interface CancelAcceptedView {
  cancelled: true;
}

/** `PUT /v1/projects/:project/tasks/:task/assignee`. */
export interface AssigneeView {
  assignee: PersonView | null;
}

// ── approvals ─────────────────────────────────────────────────────────────────────────────────────

export type ApprovalStatusView = 'pending' | 'approved' | 'denied' | 'expired' | 'withdrawn';

export interface ApprovalDecisionView {
  by: string;
  byName: string;
  decision: 'approve' | 'deny';
  comment?: string;
  at: string;
}

/** A call waiting for approval, as the viewer may see it (gateway approval-desk.ts, ApprovalView). */
export interface ApprovalRequestView {
  id: string;
  project: string;
  taskKey: string;
  upstream: string;
  tool: string;
  /** A user caller carries their handle when known. */
  caller: { kind: string; id: string; handle?: string };
  argumentsSha256: string;
  policyVersion: number;
  status: ApprovalStatusView;
  required: number;
  createdAt: string;
  expiresAt: string;
  decidedAt: string | null;
  decisions: ApprovalDecisionView[];
  mayDecide: boolean;
  /** Only to those who may approve the call. */
  arguments?: unknown;
}

/** `GET /v1/approvals`. */
export interface ApprovalsView {
  approvals: ApprovalRequestView[];
}

/** `GET /v1/approvals/:approval`. */
export interface ApprovalDetailView {
  approval: ApprovalRequestView;
}

/** `POST /v1/approvals/:approval/approve` and `/deny`. */
export interface ApprovalAnswerView {
  status: ApprovalStatusView;
  approvals: number;
  required: number;
}
