/**
 * One task as the dashboard shows it (`/v1/projects/:project/tasks/:task`, its timeline and its
 * payload): metadata for anyone with a role on the project, the payload only where the task's access
 * allows, read from the live workflow so the status and the open input requests agree.
 */
import type { TaskAccess } from '../../gateway/tasks/task-access';
import type { TaskSnapshot } from '../../protocol';
import type { TaskRecord } from '../../store/tasks/task-store';
import { HttpError } from '../rest-errors';
import { refuse, taskFor } from './access';
import type { DashboardApiDeps } from './route';
import { ok, viewerRoute } from './route';
import type { PayloadView, TaskDetailView, TaskPayloadView, TimelineView } from './view-types';
import { mentionedUsers, taskMetadataView, timelineView } from './views';

export const TASK_ROUTES = [
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
    } satisfies TaskDetailView);
  }),
  viewerRoute('GET', '/v1/projects/:project/tasks/:task/timeline', async (deps, req, viewer) => {
    const { task } = await taskFor(deps, req, viewer);
    const events = await deps.store.listEvents(task.taskKey);
    const people = await deps.dashboard.usersByIds(mentionedUsers(events));
    return ok({ timeline: timelineView(events, people) } satisfies TimelineView);
  }),
  viewerRoute('GET', '/v1/projects/:project/tasks/:task/payload', async (deps, req, viewer) => {
    const t = await taskFor(deps, req, viewer);
    const snapshot = t.access.payload.visible ? await deps.gateway.currentSnapshot(t.task) : t.task.snapshot;
    const payload = await payloadView(deps, t.task, t.access, snapshot);
    if (!payload.visible) {
      refuse(deps, t, viewer, `payload hidden: ${payload.reason}`);
      throw new HttpError(payload.reason, payload.message);
    }
    return ok({ payload } satisfies TaskPayloadView);
  }),
];

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
