/**
 * How the dashboard API's routes are declared: what every handler is given (the API's dependencies,
 * the request, the viewer) and the two kinds of route, open (signing in) and for a signed-in viewer.
 */
import type { Context } from 'koa';
import type { ApprovalDesk } from '../../gateway/tasks/approval-desk';
import type { McpGateway } from '../../gateway/gateway';
import type { ControlPlaneStore } from '../../store/control-plane';
import type { DashboardStore } from '../../store/sessions/dashboard-store';
import type { PayloadStore } from '../../store/tasks/payload-store';
import type { TaskStore } from '../../store/tasks/task-store';
import type { Reply } from '../route-table';
import type { Viewer } from './session';

export interface DashboardApiDeps {
  gateway: Pick<McpGateway, 'answerTaskInput' | 'cancelTaskByKey' | 'currentSnapshot'>;
  controlPlane: Pick<
    ControlPlaneStore,
    | 'authenticate'
    | 'userToken'
    | 'projectBySlug'
    | 'projectRole'
    | 'authorizationValid'
    | 'audit'
    | 'listUpstreamAuthorizations'
    | 'revokeUpstreamAuthorization'
  >;
  dashboard: DashboardStore;
  store: TaskStore;
  payloads: PayloadStore;
  /**
   * Users connect upstreams with OAuth here (dashboard/connect.ts): those with `auth.oauth`, or with
   * `allPerUser` (legacy `connectUpstreams`) every `per_user` one. Absent: not offered.
   */
  connectUpstreams?: { allPerUser: boolean };
  /** Calls waiting for approval (issue 27): list, show, approve, deny; absent without Temporal (503). */
  approvals?: Pick<ApprovalDesk, 'list' | 'show' | 'decide'>;
  /** The Temporal Web UI and namespace, for workflow links (team members only). */
  temporalUi?: { url: string; namespace: string };
  logger?: { error(obj: object, msg: string): void };
}

export interface Request {
  ctx: Context;
  params: string[];
  body: Record<string, unknown>;
  query: URLSearchParams;
}
type Handler = (deps: DashboardApiDeps, req: Request, viewer: Viewer | undefined) => Promise<Reply>;
type ViewerHandler = (deps: DashboardApiDeps, req: Request, viewer: Viewer) => Promise<Reply>;

export interface Route {
  method: string;
  path: string;
  handler: Handler;
  /** The viewer is authenticated before the body is read. */
  signedIn: boolean;
}

export const ok = (body: unknown): Reply => ({ body });

export function route(method: string, path: string, handler: Handler, signedIn = false): Route {
  return { method, path, handler, signedIn };
}

/** A route for a signed-in viewer (bearer token or session), authenticated before the body is read. */
export function viewerRoute(method: string, path: string, handler: ViewerHandler): Route {
  return route(
    method,
    path,
    (deps, req, viewer) => {
      if (!viewer) throw new Error('viewerRoute reached without a viewer');
      return handler(deps, req, viewer);
    },
    true,
  );
}
