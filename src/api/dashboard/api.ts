/**
 * The dashboard's JSON API (docs/dashboard.md): sign-in sessions under `/v1/session`, and a user's
 * projects and their tasks under `/v1/projects`. Every task request re-checks, on that request, that the
 * viewer has a role on the project and what that role allows (src/gateway/task-access.ts). Answering
 * input and cancelling go through the gateway's own `tasks/update` / `tasks/cancel` code.
 */
import type { Context, Middleware } from 'koa';
import { z } from 'zod';
import type { McpCall, McpGateway } from '../../gateway/gateway';
import type { PayloadDenial, TaskAccess } from '../../gateway/task-access';
import { taskAccess } from '../../gateway/task-access';
import type { InputRequests, JsonRpcErrorObject, TaskSnapshot } from '../../protocol';
import { META, PROTOCOL_VERSION, TASKS_EXTENSION } from '../../protocol';
import type { ControlPlaneStore } from '../../store/control-plane';
import { parse } from '../../store/control-plane';
import type { ProjectRecord } from '../../store/control-plane/types';
import type { DashboardStore, ProjectRole } from '../../store/dashboard-store';
import type { PayloadStore } from '../../store/payload-store';
import type { TaskListQuery, TaskRecord, TaskStore } from '../../store/task-store';
import { TASK_GROUPS } from '../../store/task-store';
import { taskWorkflowId } from '../../workflows/messages';
import { readJson } from '../admin/http';
import { HttpError, restErrors } from '../rest-errors';
import type { Reply } from '../routes';
import { matchRoute, requireRoute, routePattern, writeReply } from '../routes';
import type { Viewer } from './session';
import { clearSessionCookie, requireSameOrigin, SESSION_COOKIE, setSessionCookie, viewerOf } from './session';
import {
  decodeListCursor,
  encodeListCursor,
  mentionedUsers,
  taskMetadataView,
  taskSummaryView,
  timelineView,
} from './views';

export interface DashboardApiDeps {
  gateway: Pick<McpGateway, 'answerTaskInput' | 'cancelTaskByKey' | 'currentSnapshot'>;
  controlPlane: Pick<
    ControlPlaneStore,
    'authenticate' | 'userToken' | 'projectBySlug' | 'projectRole' | 'authorizationValid' | 'audit'
  >;
  dashboard: DashboardStore;
  store: TaskStore;
  payloads: PayloadStore;
  /** The Temporal Web UI and namespace, for workflow links (team members only). */
  temporalUi?: { url: string; namespace: string };
  logger?: { error(obj: object, msg: string): void };
}

interface Request {
  ctx: Context;
  params: string[];
  body: Record<string, unknown>;
  query: URLSearchParams;
}
type Handler = (deps: DashboardApiDeps, req: Request, viewer: Viewer | undefined) => Promise<Reply>;
type ViewerHandler = (deps: DashboardApiDeps, req: Request, viewer: Viewer) => Promise<Reply>;

const DEFAULT_PAGE = 50;
const MAX_PAGE = 200;
const MAX_BODY_BYTES = 256 * 1024;

/**
 * The dashboard is a form-elicitation client of the Tasks extension: its answer and cancel buttons reach
 * the gateway as a request declaring exactly that.
 */
const DASHBOARD_META: McpCall['params']['_meta'] = {
  [META.protocolVersion]: PROTOCOL_VERSION,
  [META.clientCapabilities]: { extensions: { [TASKS_EXTENSION]: {} }, elicitation: { form: {} } },
  [META.clientInfo]: { name: 'taskrouter-dashboard', version: '1' },
};

const InputResponsesBody = z.strictObject({
  inputResponses: z
    .record(
      z.string().min(1).max(200),
      z.strictObject({
        action: z.enum(['accept', 'decline', 'cancel']),
        content: z.record(z.string(), z.unknown()).optional(),
      }),
    )
    .refine((r) => Object.keys(r).length > 0, 'answer at least one input request'),
});
const AssigneeBody = z.strictObject({ assignee: z.string().min(1).max(200).nullable() });
const SignInBody = z.strictObject({ token: z.string().min(1).max(512) });

// ── routes ─────────────────────────────────────────────────────────────────────────────────────────

const ok = (body: unknown): Reply => ({ body });

function route(method: string, pattern: string, handler: Handler, signedIn = false) {
  return { method, pattern: routePattern(pattern), handler, signedIn };
}

/** A route for a signed-in viewer (bearer token or session), authenticated before the body is read. */
function viewerRoute(method: string, pattern: string, handler: ViewerHandler) {
  return route(
    method,
    pattern,
    (deps, req, viewer) => {
      if (!viewer) throw new Error('viewerRoute reached without a viewer');
      return handler(deps, req, viewer);
    },
    true,
  );
}

const ROUTES = [
  route('POST', '/v1/session', async (deps, req) => {
    requireSameOrigin(req.ctx);
    const { token } = parse(SignInBody, req.body);
    const checked = await deps.controlPlane.userToken(token);
    const user = checked && (await deps.dashboard.user(checked.userId));
    if (!checked || !user) throw new HttpError('unauthorized', 'Unknown, revoked or expired user token');
    const opened = await deps.dashboard.openSession(user, checked);
    // A sign-in replaces the browser's previous session rather than leaving it behind.
    const previous = req.ctx.cookies.get(SESSION_COOKIE);
    if (previous !== undefined) await deps.dashboard.signOut(previous);
    setSessionCookie(req.ctx, opened.secret, opened.session.expiresAt);
    return ok({ user: opened.session.user, csrfToken: opened.session.csrfToken });
  }),
  viewerRoute('GET', '/v1/session', async (_deps, _req, viewer) =>
    ok({ user: viewer.user, ...(viewer.csrfToken !== undefined && { csrfToken: viewer.csrfToken }) }),
  ),
  viewerRoute('DELETE', '/v1/session', async (deps, req) => {
    const secret = req.ctx.cookies.get(SESSION_COOKIE);
    if (secret !== undefined) await deps.dashboard.signOut(secret);
    clearSessionCookie(req.ctx);
    return undefined;
  }),

  viewerRoute('GET', '/v1/projects', async (deps, _req, viewer) =>
    ok({ projects: await deps.dashboard.projectsOf(viewer.user.id) }),
  ),
  viewerRoute('GET', '/v1/projects/:project', async (deps, req, viewer) => {
    const { project, role } = await projectFor(deps, req, viewer);
    return ok({
      project: { slug: project.slug, role },
      viewer: viewer.user,
      people: (await deps.dashboard.peopleOf(project)).map(({ handle, name }) => ({ handle, name })),
    });
  }),

  viewerRoute('GET', '/v1/projects/:project/tasks', async (deps, req, viewer) => {
    const { project } = await projectFor(deps, req, viewer);
    const q = listQuery(req.query, project.id, viewer.user.id);
    const [tasks, counts] = await Promise.all([
      deps.store.listProjectTasks({ ...q, limit: q.limit + 1 }),
      deps.store.countProjectTasks(project.id, q.assigned),
    ]);
    const page = tasks.slice(0, q.limit);
    const last = page.at(-1);
    const people = await deps.dashboard.usersByIds(mentionedUsers(page));
    return ok({
      group: q.group,
      assigned: req.query.get('assigned') ?? 'all',
      counts,
      tasks: page.map((t) => taskSummaryView(t, people)),
      ...(tasks.length > q.limit && last && { nextCursor: encodeListCursor(last) }),
    });
  }),

  viewerRoute('GET', '/v1/projects/:project/tasks/:task', async (deps, req, viewer) => {
    const t = await taskFor(deps, req, viewer);
    const events = await deps.store.listEvents(t.task.taskKey);
    const people = await deps.dashboard.usersByIds([...mentionedUsers([t.task]), ...mentionedUsers(events)]);
    // One live query, so the status and the open input requests shown agree with each other.
    const snapshot = t.access.payload.visible ? await deps.gateway.currentSnapshot(t.task) : t.task.snapshot;
    const payload = await payloadView(deps, t.task, t.access, snapshot);
    return ok({
      task: { ...taskMetadataView(t.task, people), status: snapshot.status },
      timeline: timelineView(events, people),
      payload,
      controls: {
        assign: t.access.assign,
        cancel: t.access.cancel,
        answer: t.access.answer && snapshot.status === 'input_required',
      },
      ...(t.access.workflowLink && { workflow: workflowView(deps, t.task) }),
    });
  }),
  viewerRoute('GET', '/v1/projects/:project/tasks/:task/timeline', async (deps, req, viewer) => {
    const { task } = await taskFor(deps, req, viewer);
    const events = await deps.store.listEvents(task.taskKey);
    return ok({ timeline: timelineView(events, await deps.dashboard.usersByIds(mentionedUsers(events))) });
  }),
  viewerRoute('GET', '/v1/projects/:project/tasks/:task/payload', async (deps, req, viewer) => {
    const t = await taskFor(deps, req, viewer);
    const snapshot = t.access.payload.visible ? await deps.gateway.currentSnapshot(t.task) : t.task.snapshot;
    const payload = await payloadView(deps, t.task, t.access, snapshot);
    if (!payload.visible) {
      refuse(deps, t, viewer, `payload hidden: ${payload.reason}`);
      throw new HttpError(payload.reason, payload.message);
    }
    return ok({ payload });
  }),

  viewerRoute('POST', '/v1/projects/:project/tasks/:task/input', async (deps, req, viewer) => {
    const t = await taskFor(deps, req, viewer);
    const { inputResponses } = parse(InputResponsesBody, req.body);
    if (!t.access.answer) {
      refuse(deps, t, viewer, 'answer input refused');
      throw new HttpError('forbidden', controlRefusal(t.access));
    }
    await deps.gateway.answerTaskInput(
      dashboardCall(t.project, viewer, 'tasks/update'),
      t.task.taskKey,
      inputResponses,
    );
    return { status: 202, body: { accepted: Object.keys(inputResponses) } };
  }),
  viewerRoute('POST', '/v1/projects/:project/tasks/:task/cancel', async (deps, req, viewer) => {
    const t = await taskFor(deps, req, viewer);
    if (!t.access.cancel) {
      refuse(deps, t, viewer, 'cancel refused');
      throw new HttpError('forbidden', controlRefusal(t.access));
    }
    await deps.gateway.cancelTaskByKey(dashboardCall(t.project, viewer, 'tasks/cancel'), t.task.taskKey);
    return { status: 202, body: { cancelled: true } };
  }),
  viewerRoute('PUT', '/v1/projects/:project/tasks/:task/assignee', async (deps, req, viewer) => {
    const t = await taskFor(deps, req, viewer);
    const { assignee } = parse(AssigneeBody, req.body);
    if (!t.access.assign) {
      refuse(deps, t, viewer, 'assign refused');
      throw new HttpError('forbidden', "Only members of the project's team can assign its tasks");
    }
    const target =
      assignee === null
        ? undefined
        : (await deps.dashboard.peopleOf(t.project)).find((p) => p.handle === assignee || p.id === assignee);
    if (assignee !== null && !target) {
      throw new HttpError('invalid', `"${assignee}" cannot access project "${t.project.slug}"`);
    }
    const assigneeId = target?.id ?? null;
    const actor = `user:${viewer.user.id}`;
    const outcome = await deps.store.assign(t.task.taskKey, assigneeId, actor, new Date().toISOString());
    if (outcome === 'missing') throw new HttpError('not_found', 'No such task in this project');
    if (outcome === 'changed') {
      // The assignment is saved; a failed audit write is logged, not turned into a failed request.
      await deps.controlPlane
        .audit({
          projectId: t.project.id,
          actor,
          action: assigneeId === null ? 'task.unassigned' : 'task.assigned',
          detail: { workflowId: t.task.workflowId, ...(assigneeId !== null && { assignee: assigneeId }) },
        })
        .catch((err: unknown) => deps.logger?.error({ err: (err as Error).name }, 'audit write failed'));
    }
    return ok({ assignee: target ? { handle: target.handle, name: target.name } : null });
  }),
];

// ── access ─────────────────────────────────────────────────────────────────────────────────────────

/** The project and the viewer's role on it; no role answers like an unknown project. */
async function projectFor(
  deps: DashboardApiDeps,
  req: Request,
  viewer: Viewer,
): Promise<{ project: ProjectRecord; role: ProjectRole }> {
  const slug = req.params[0] as string;
  const project = await deps.controlPlane.projectBySlug(slug);
  const role = project && (await deps.controlPlane.projectRole(viewer.user.id, project));
  if (!project || !role) throw new HttpError('not_found', `No project "${slug}"`);
  return { project, role };
}

interface TaskContext {
  project: ProjectRecord;
  role: ProjectRole;
  task: TaskRecord;
  access: TaskAccess;
}

async function taskFor(deps: DashboardApiDeps, req: Request, viewer: Viewer): Promise<TaskContext> {
  const { project, role } = await projectFor(deps, req, viewer);
  const ref = req.params[1] as string;
  const task = /^[0-9a-f]{64}$/.test(ref) ? await deps.store.getTask(ref) : undefined;
  if (!task || task.project !== project.id || task.workflowId !== taskWorkflowId(task.taskKey)) {
    throw new HttpError('not_found', 'No such task in this project');
  }
  const ownsTask = task.caller.kind === 'user' && task.caller.id === viewer.user.id;
  // Only the owner's authorization matters (nobody else ever sees payloads or controls).
  const authorizationValid =
    !ownsTask ||
    task.authorizationId === null ||
    (await deps.controlPlane.authorizationValid(task.authorizationId));
  const access = taskAccess({
    role,
    viewerUserId: viewer.user.id,
    caller: task.caller,
    status: task.snapshot.status,
    authorizationValid,
    payloadExpired: task.payloadExpired === true,
  });
  return { project, role, task, access };
}

function controlRefusal(access: TaskAccess): string {
  if (!access.payload.visible && access.payload.reason !== 'expired') return access.payload.message;
  return 'This task can no longer be controlled (it has finished or is not waiting for input)';
}

/** Refusals are audited (not awaited: a refusal must not take longer because it is written down). */
function refuse(deps: DashboardApiDeps, t: TaskContext, viewer: Viewer, reason: string): void {
  deps.controlPlane
    .audit({
      projectId: t.project.id,
      actor: `user:${viewer.user.id}`,
      action: 'task.access_denied',
      detail: { via: 'dashboard', reason, workflowId: t.task.workflowId },
    })
    .catch((err: unknown) => deps.logger?.error({ err }, 'audit write failed'));
}

/** The gateway request the dashboard's answer and cancel buttons make, as the signed-in user. */
function dashboardCall(project: ProjectRecord, viewer: Viewer, method: string): McpCall {
  return {
    project,
    principal: { kind: 'user', userId: viewer.user.id },
    method,
    params: { _meta: DASHBOARD_META },
  };
}

// ── payloads ───────────────────────────────────────────────────────────────────────────────────────

type PayloadView =
  | {
      visible: true;
      arguments?: unknown;
      inputRequests?: InputRequests;
      result?: Record<string, unknown>;
      error?: JsonRpcErrorObject;
    }
  | { visible: false; reason: PayloadDenial; message: string };

async function payloadView(
  deps: DashboardApiDeps,
  task: TaskRecord,
  access: TaskAccess,
  snapshot: TaskSnapshot,
): Promise<PayloadView> {
  if (!access.payload.visible) return access.payload;
  const request = await deps.payloads.firstOf<{ arguments?: unknown }>(task.taskKey, 'request');
  return {
    visible: true,
    ...(request?.arguments !== undefined && { arguments: request.arguments }),
    ...(snapshot.status === 'input_required' &&
      snapshot.inputRequests && { inputRequests: snapshot.inputRequests }),
    ...(snapshot.result && { result: snapshot.result }),
    ...(snapshot.error && { error: snapshot.error }),
  };
}

function workflowView(deps: DashboardApiDeps, task: TaskRecord) {
  const ui = deps.temporalUi;
  return {
    id: task.workflowId,
    ...(ui && {
      url: `${ui.url.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(ui.namespace)}/workflows/${encodeURIComponent(task.workflowId)}`,
    }),
  };
}

// ── plumbing ───────────────────────────────────────────────────────────────────────────────────────

function listQuery(query: URLSearchParams, project: string, viewerId: string): TaskListQuery {
  const group = query.get('group') ?? 'all';
  if (!(TASK_GROUPS as readonly string[]).includes(group)) {
    throw new HttpError('invalid', `"group" must be one of ${TASK_GROUPS.join(', ')}`);
  }
  const assignedParam = query.get('assigned');
  let assigned: TaskListQuery['assigned'];
  if (assignedParam === 'any') assigned = { kind: 'any' };
  else if (assignedParam === 'me') assigned = { kind: 'user', userId: viewerId };
  else if (assignedParam !== null && assignedParam !== 'all') {
    throw new HttpError('invalid', '"assigned" must be "all", "any" or "me"');
  }
  const limitParam = query.get('limit');
  if (limitParam !== null && !/^\d{1,4}$/.test(limitParam))
    throw new HttpError('invalid', '"limit" must be a number');
  const limit = Math.min(MAX_PAGE, Math.max(1, Number(limitParam ?? DEFAULT_PAGE)));
  const cursor = query.get('cursor');
  return {
    project,
    group: group as TaskListQuery['group'],
    ...(assigned && { assigned }),
    ...(cursor !== null && { after: decodeListCursor(cursor) }),
    limit,
  };
}

export function dashboardApi(deps: DashboardApiDeps): Middleware {
  const answerErrors = restErrors({
    realm: 'taskrouter',
    label: 'dashboard API',
    ...(deps.logger && { logger: deps.logger }),
  });
  return async (ctx, next) => {
    if (!(
      ctx.path === '/v1/session' ||
      ctx.path === '/v1/projects' ||
      ctx.path.startsWith('/v1/projects/')
    )) {
      return next();
    }
    ctx.set('Cache-Control', 'no-store');
    await answerErrors(ctx, async () => {
      const { route: found, params } = requireRoute(
        ctx,
        matchRoute(ROUTES, ctx.method, ctx.path),
        'endpoint',
      );
      // Who asks is settled before a body is read: strangers get 401, not a parse error.
      const viewer = found.signedIn ? await viewerOf(ctx, deps.controlPlane, deps.dashboard) : undefined;
      const body = ['POST', 'PUT', 'PATCH'].includes(ctx.method) ? await readJson(ctx, MAX_BODY_BYTES) : {};
      const query = new URLSearchParams(ctx.querystring);
      writeReply(ctx, await found.handler(deps, { ctx, params, body, query }, viewer));
    });
  };
}
