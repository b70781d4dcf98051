/**
 * What the dashboard can do to a task: answer its input requests and cancel it (through the gateway's
 * own `tasks/update` / `tasks/cancel` code, as the signed-in user), and assign it to a person. Each is
 * checked against the task's access on the request, and a refusal is audited.
 */
import { z } from 'zod';
import type { McpCall } from '../../gateway/gateway';
import { META, PROTOCOL_VERSION, TASKS_EXTENSION } from '../../protocol';
import { parse } from '../../store/control-plane';
import type { ProjectRecord } from '../../store/control-plane/types';
import { HttpError } from '../rest-errors';
import { controlRefusal, refuse, taskFor } from './access';
import { ok, viewerRoute } from './route';
import type { Viewer } from './session';
import type { AssigneeView, CancelAcceptedView, InputAcceptedView } from './view-types';

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

export const TASK_CONTROL_ROUTES = [
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
    return { status: 202, body: { accepted: Object.keys(inputResponses) } satisfies InputAcceptedView };
  }),
  viewerRoute('POST', '/v1/projects/:project/tasks/:task/cancel', async (deps, req, viewer) => {
    const t = await taskFor(deps, req, viewer);
    if (!t.access.cancel) {
      refuse(deps, t, viewer, 'cancel refused');
      throw new HttpError('forbidden', controlRefusal(t.access));
    }
    await deps.gateway.cancelTaskByKey(dashboardCall(t.project, viewer, 'tasks/cancel'), t.task.taskKey);
    return { status: 202, body: { cancelled: true } satisfies CancelAcceptedView };
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
    return ok({
      assignee: target ? { handle: target.handle, name: target.name } : null,
    } satisfies AssigneeView);
  }),
];

/** The gateway request the dashboard's answer and cancel buttons make, as the signed-in user. */
function dashboardCall(project: ProjectRecord, viewer: Viewer, method: string): McpCall {
  return {
    project,
    principal: { kind: 'user', userId: viewer.user.id },
    method,
    params: { _meta: DASHBOARD_META },
  };
}
