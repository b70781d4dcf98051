/**
 * A viewer's projects, a project (its people and its upstreams' probe status) and its task list (`/v1/projects`, `/v1/projects/:project/tasks`): task
 * metadata only, a page at a time, with the counts of every group under the same filters (Assigned, Hosted).
 */
import type { TaskListQuery } from '../../store/tasks/task-store';
import { connectsWithOAuth } from '../../store/control-plane/upstreams';
import { TASK_GROUPS } from '../../store/tasks/task-store';
import { AUTHORIZATION_REVOKE } from '../admin/operations/authorizations';
import { invoke } from '../admin/operations/define';
import { HttpError } from '../rest-errors';
import { projectFor } from './access';
import { approvalPolicyView } from './approval-routes';
import { ok, viewerRoute } from './route';
import type {
  ConnectionRevokedView,
  ConnectionsView,
  ProjectsView,
  ProjectView,
  TaskListView,
} from './view-types';
import {
  decodeListCursor,
  encodeListCursor,
  mentionedUsers,
  taskSummaryView,
  upstreamStatusView,
} from './views';

const DEFAULT_PAGE = 50;
const MAX_PAGE = 200;

export const PROJECT_ROUTES = [
  viewerRoute('GET', '/v1/projects', async (deps, _req, viewer) =>
    ok({ projects: await deps.dashboard.projectsOf(viewer.user.id) } satisfies ProjectsView),
  ),
  viewerRoute('GET', '/v1/projects/:project', async (deps, req, viewer) => {
    const { project, role } = await projectFor(deps, req, viewer);
    return ok({
      project: { slug: project.slug, role },
      viewer: viewer.user,
      people: (await deps.dashboard.peopleOf(project)).map(({ handle, name }) => ({ handle, name })),
      upstreams: project.upstreams.map(upstreamStatusView),
      approvalPolicy: await approvalPolicyView(deps, project),
    } satisfies ProjectView);
  }),

  // The viewer's own connections to the project's per-user upstreams, and where to make them.
  viewerRoute('GET', '/v1/projects/:project/connections', async (deps, req, viewer) => {
    const offered = deps.connectUpstreams;
    if (!offered) throw new HttpError('not_found', 'Connecting upstreams is not enabled');
    const { project } = await projectFor(deps, req, viewer);
    const mine = await deps.controlPlane.listUpstreamAuthorizations(
      { kind: 'user', userId: viewer.user.id },
      project.slug,
    );
    const connections = project.upstreams
      .filter((u) => u.enabled && connectsWithOAuth(u, offered.allPerUser))
      .map((u) => {
        const latest = mine
          // Managers are shown everyone's authorizations: only the viewer's own count here.
          .filter((a) => a.upstreamId === u.id && a.userId === viewer.user.id)
          .sort((x, y) => y.createdAt.localeCompare(x.createdAt))[0];
        return {
          alias: u.alias,
          // Past its access token's expiry, a connection that renews itself on its next use is connected.
          status: latest?.status === 'expired' && latest.renewable ? 'active' : (latest?.status ?? 'none'),
          expiresAt: latest?.expiresAt ?? null,
          // How the gateway's client at the upstream's authorization server came about (null: not yet).
          registration: (u.auth.mode === 'per_user' && u.auth.oauth?.registration) || null,
          connectUrl: `/v1/connect/${encodeURIComponent(project.slug)}/${encodeURIComponent(u.alias)}`,
        };
      });
    return ok({ connections } satisfies ConnectionsView);
  }),

  // "Disconnect": the viewer revokes their own connection, here and at the upstream's authorization
  // server (RFC 7009, best effort); calls then ask them to connect again.
  viewerRoute('DELETE', '/v1/projects/:project/connections/:alias', async (deps, req, viewer) => {
    if (!deps.connectUpstreams) throw new HttpError('not_found', 'Connecting upstreams is not enabled');
    const { project } = await projectFor(deps, req, viewer);
    const alias = req.params[1] as string;
    const upstream = project.upstreams.find((u) => u.alias === alias);
    if (!upstream || !connectsWithOAuth(upstream, deps.connectUpstreams.allPerUser)) {
      throw new HttpError('not_found', `No connection to "${alias}" in project "${project.slug}"`);
    }
    // The admin API's own operation, for the viewer's own authorization.
    const revoked = await invoke(
      AUTHORIZATION_REVOKE,
      { project: project.slug, alias: upstream.alias },
      { actor: { kind: 'user', userId: viewer.user.id }, cp: deps.controlPlane },
    );
    return ok({
      connection: { alias: upstream.alias, status: revoked.status },
    } satisfies ConnectionRevokedView);
  }),

  viewerRoute('GET', '/v1/projects/:project/tasks', async (deps, req, viewer) => {
    const { project } = await projectFor(deps, req, viewer);
    const q = listQuery(req.query, project.id, viewer.user.id);
    const [tasks, counts] = await Promise.all([
      deps.store.listProjectTasks({ ...q, limit: q.limit + 1 }),
      deps.store.countProjectTasks(project.id, q.assigned, q.hosted),
    ]);
    const page = tasks.slice(0, q.limit);
    const last = page.at(-1);
    const people = await deps.dashboard.usersByIds(mentionedUsers(page));
    return ok({
      group: q.group,
      assigned: req.query.get('assigned') ?? 'all',
      hosted: q.hosted === true,
      counts,
      tasks: page.map((t) => taskSummaryView(t, people)),
      ...(tasks.length > q.limit && last && { nextCursor: encodeListCursor(last) }),
    } satisfies TaskListView);
  }),
];

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
  // Only the tasks the gateway hosts (docs/hosted-tasks.md); absent: every task.
  const hostedParam = query.get('hosted');
  if (hostedParam !== null && hostedParam !== 'true')
    throw new HttpError('invalid', '"hosted" must be "true"');
  const limitParam = query.get('limit');
  if (limitParam !== null && !/^\d{1,4}$/.test(limitParam))
    throw new HttpError('invalid', '"limit" must be a number');
  const limit = Math.min(MAX_PAGE, Math.max(1, Number(limitParam ?? DEFAULT_PAGE)));
  const cursor = query.get('cursor');
  return {
    project,
    group: group as TaskListQuery['group'],
    ...(assigned && { assigned }),
    ...(hostedParam === 'true' && { hosted: true }),
    ...(cursor !== null && { after: decodeListCursor(cursor) }),
    limit,
  };
}
