/**
 * Who may see and do what on a dashboard request, decided on that request: the viewer's role on the
 * project (none answers like an unknown project), the task's access (src/gateway/tasks/task-access.ts), and
 * the audit row a refusal leaves.
 */
import type { TaskAccess } from '../../gateway/tasks/task-access';
import { taskAccess } from '../../gateway/tasks/task-access';
import type { ProjectRecord } from '../../store/control-plane/types';
import type { ProjectRole } from '../../store/sessions/dashboard-store';
import type { TaskRecord } from '../../store/tasks/task-store';
import { taskWorkflowId } from '../../workflows/messages';
import { HttpError } from '../rest-errors';
import type { DashboardApiDeps, Request } from './route';
import type { Viewer } from './session';

/** The project and the viewer's role on it; no role answers like an unknown project. */
export async function projectFor(
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

export interface TaskContext {
  project: ProjectRecord;
  role: ProjectRole;
  task: TaskRecord;
  access: TaskAccess;
}

export async function taskFor(deps: DashboardApiDeps, req: Request, viewer: Viewer): Promise<TaskContext> {
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

export function controlRefusal(access: TaskAccess): string {
  if (!access.payload.visible && access.payload.reason !== 'expired') return access.payload.message;
  return 'This task can no longer be controlled (it has finished or is not waiting for input)';
}

/** Refusals are audited (not awaited: a refusal must not take longer because it is written down). */
export function refuse(deps: DashboardApiDeps, t: TaskContext, viewer: Viewer, reason: string): void {
  deps.controlPlane
    .audit({
      projectId: t.project.id,
      actor: `user:${viewer.user.id}`,
      action: 'task.access_denied',
      detail: { via: 'dashboard', reason, workflowId: t.task.workflowId },
    })
    .catch((err: unknown) => deps.logger?.error({ err }, 'audit write failed'));
}
