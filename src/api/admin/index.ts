/**
 * The admin API: JSON over HTTP under `/v1/admin`. The caller is the instance administrator (admin token
 * from configuration) or a user (personal access token); every operation enforces the roles table in
 * `ControlPlaneStore`. Responses never carry hashes or credentials; tokens and keys appear once, in the
 * response that created them. See docs/admin.md.
 */
import type { Context, Middleware } from 'koa';
import { unmatchedRules } from '../../config/hosting';
import type { ApprovalDesk } from '../../gateway/tasks/approval-desk';
import type { ControlPlaneStore, ProjectView, UpstreamView } from '../../store/control-plane';
import type { Principal } from '../../store/control-plane/types';
import type { Reply } from '../routes';
import { matchRoute, requireRoute, writeReply } from '../routes';
import { HttpError, restErrors } from '../rest-errors';
import { APPROVAL_ROUTES } from './approval-routes';
import { principalOf, readJson } from './http';
import type { AdminHandler, AdminRequest } from './route';
import { adminRoute } from './route';

export interface AdminApiDeps {
  controlPlane: ControlPlaneStore;
  /** `admin.token` from configuration; without it only user tokens are accepted. */
  adminToken?: string;
  /** Largest accepted request body (default 64 KiB). */
  maxBodyBytes?: number;
  logger?: { error(obj: object, msg: string): void };
  /** Triggers a retention schedule now (docs/retention.md); absent without a Temporal client. */
  runRetention?: (kind: 'payloads' | 'metadata') => Promise<unknown>;
  /**
   * Starts (or joins) a project's deletion workflow for a project already marked deleting. Without it,
   * DELETE /projects/{project} deletes the control-plane rows directly.
   */
  startProjectDeletion?: (projectId: string) => Promise<{ workflowId: string }>;
  /**
   * Probes an upstream (which MCP era it speaks) and records the outcome in its view; run when an
   * upstream is added or changed, and on request. Absent, views show the last recorded probe.
   */
  probeUpstream?: (projectRef: string, alias: string) => Promise<void>;
  /**
   * The tool names this process last read from an upstream (by id), without asking it; undefined when
   * it has read none. Upstream views then show the hosting rules that match nothing (`hosting.unmatched`).
   */
  knownTools?: (upstreamId: string) => readonly string[] | undefined;
  /** Calls waiting for approval (docs/approvals.md); absent without a task engine. */
  approvals?: ApprovalDesk;
}

type Request = AdminRequest;

const PREFIX = '/v1/admin';
const route = (method: string, pattern: string, handler: AdminHandler<AdminApiDeps>) =>
  adminRoute(method, pattern, handler);

/** `me` names the calling user wherever a user is expected. */
function userRef(actor: Principal, ref: string): string {
  if (ref !== 'me') return ref;
  if (actor.kind !== 'user') throw new HttpError('invalid', 'The administrator is not a user');
  return actor.userId;
}

function p(req: Request, i: number): string {
  return req.params[i] as string;
}

function str(body: Record<string, unknown>, key: string): string {
  const v = body[key];
  if (typeof v !== 'string' || v === '')
    throw new HttpError('invalid', `"${key}" must be a non-empty string`);
  return v;
}

function optionalStr(value: unknown, key: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value === '') throw new HttpError('invalid', `"${key}" must be a string`);
  return value;
}

const ok = (body: unknown): Reply => ({ body });
const created = (body: unknown): Reply => ({ status: 201, body });

const ROUTES = [
  route('GET', '/me', async (cp, { actor }) => {
    if (actor.kind === 'admin') return ok({ kind: 'admin' });
    return ok({ kind: 'user', user: await cp.getUser(actor, userRef(actor, 'me')) });
  }),

  // Teams
  route('GET', '/teams', async (cp, { actor }) => ok({ teams: await cp.listTeams(actor) })),
  route('POST', '/teams', async (cp, { actor, body }) => created(await cp.createTeam(actor, body as never))),
  route('GET', '/teams/:team', async (cp, r) => ok(await cp.getTeam(r.actor, p(r, 0)))),
  route('PATCH', '/teams/:team', async (cp, r) => ok((await cp.updateTeam(r.actor, p(r, 0), r.body)).record)),
  route('POST', '/teams/:team/members', async (cp, r) => {
    const result = await cp.addTeamMember(r.actor, p(r, 0), userRef(r.actor, str(r.body, 'user')));
    return { status: result.changed ? 201 : 200, body: result.record };
  }),
  route('DELETE', '/teams/:team/members/:user', async (cp, r) => {
    await cp.removeTeamMember(r.actor, p(r, 0), userRef(r.actor, p(r, 1)));
    return undefined;
  }),

  // Users and their tokens
  route('GET', '/users', async (cp, { actor }) => ok({ users: await cp.listUsers(actor) })),
  route('POST', '/users', async (cp, { actor, body }) => created(await cp.createUser(actor, body as never))),
  route('GET', '/users/:user', async (cp, r) => ok(await cp.getUser(r.actor, userRef(r.actor, p(r, 0))))),
  route('PATCH', '/users/:user', async (cp, r) =>
    ok((await cp.updateUser(r.actor, userRef(r.actor, p(r, 0)), r.body)).record),
  ),
  route('GET', '/users/:user/tokens', async (cp, r) =>
    ok({ tokens: await cp.listUserTokens(r.actor, userRef(r.actor, p(r, 0))) }),
  ),
  route('POST', '/users/:user/tokens', async (cp, r) => {
    const { token, record } = await cp.issueUserToken(r.actor, userRef(r.actor, p(r, 0)), r.body as never);
    return created({ ...record, token });
  }),
  route('DELETE', '/users/:user/tokens/:token', async (cp, r) => {
    const user = userRef(r.actor, p(r, 0));
    const tokens = await cp.listUserTokens(r.actor, user);
    if (!tokens.some((t) => t.id === p(r, 1))) throw new HttpError('not_found', `No token "${p(r, 1)}"`);
    return ok(await cp.revokeToken(r.actor, p(r, 1)));
  }),

  // Projects
  route('GET', '/projects', async (cp, { actor }, deps) =>
    ok({ projects: (await cp.listProjects(actor)).map((v) => projectShown(v, deps)) }),
  ),
  route('POST', '/projects', async (cp, { actor, body }) =>
    created(await cp.createProject(actor, body as never)),
  ),
  route('GET', '/projects/:project', async (cp, r, deps) =>
    ok(projectShown(await cp.getProject(r.actor, p(r, 0)), deps)),
  ),
  route('PATCH', '/projects/:project', async (cp, r) =>
    ok((await cp.updateProject(r.actor, p(r, 0), r.body)).record),
  ),
  route('DELETE', '/projects/:project', async (cp, r, deps) => {
    if (!deps.startProjectDeletion) {
      await cp.deleteProject(r.actor, p(r, 0));
      return undefined;
    }
    // The project stops serving at once; the deletion workflow removes the rest (docs/retention.md).
    const project = await cp.markProjectDeleting(r.actor, p(r, 0));
    const { workflowId } = await deps.startProjectDeletion(project.id);
    return { status: 202, body: { id: project.id, slug: project.slug, deletion: { workflowId } } };
  }),

  // Direct project members
  route('GET', '/projects/:project/members', async (cp, r) =>
    ok({ members: await cp.listProjectMembers(r.actor, p(r, 0)) }),
  ),
  route('POST', '/projects/:project/members', async (cp, r) => {
    const result = await cp.addProjectMember(r.actor, p(r, 0), userRef(r.actor, str(r.body, 'user')));
    return { status: result.changed ? 201 : 200, body: result.record };
  }),
  route('DELETE', '/projects/:project/members/:user', async (cp, r) => {
    await cp.removeProjectMember(r.actor, p(r, 0), userRef(r.actor, p(r, 1)));
    return undefined;
  }),

  // API keys
  route('GET', '/projects/:project/keys', async (cp, r) =>
    ok({ keys: await cp.listApiKeys(r.actor, p(r, 0)) }),
  ),
  route('POST', '/projects/:project/keys', async (cp, r) => {
    const { key, record } = await cp.createApiKey(r.actor, p(r, 0), r.body as never);
    return created({ ...record, key });
  }),
  route('DELETE', '/projects/:project/keys/:key', async (cp, r) =>
    ok(await cp.revokeApiKey(r.actor, p(r, 0), p(r, 1))),
  ),

  // Upstreams
  route('GET', '/projects/:project/upstreams', async (cp, r, deps) =>
    ok({ upstreams: (await cp.listUpstreams(r.actor, p(r, 0))).map((v) => upstreamShown(v, deps)) }),
  ),
  route('POST', '/projects/:project/upstreams', async (cp, r, deps) => {
    const added = await cp.addUpstream(r.actor, p(r, 0), r.body as never);
    return created(await probed(cp, r, deps, added.alias));
  }),
  route('PATCH', '/projects/:project/upstreams/:alias', async (cp, r, deps) => {
    const { record, changed } = await cp.updateUpstream(r.actor, p(r, 0), p(r, 1), r.body);
    return ok(changed ? await probed(cp, r, deps, record.alias) : upstreamShown(record, deps));
  }),
  route('POST', '/projects/:project/upstreams/:alias/probe', async (cp, r, deps) => {
    const alias = (await upstreamView(cp, r, deps, p(r, 1))).alias;
    return ok(await probed(cp, r, deps, alias));
  }),
  route('DELETE', '/projects/:project/upstreams/:alias', async (cp, r) => {
    await cp.removeUpstream(r.actor, p(r, 0), p(r, 1));
    return undefined;
  }),

  // Per-user upstream authorizations
  route('PUT', '/projects/:project/upstreams/:alias/authorization', async (cp, r) => {
    const { user, ...rest } = r.body;
    const ref = optionalStr(user, 'user');
    return ok(
      await cp.grantUpstreamAuthorization(r.actor, p(r, 0), p(r, 1), {
        ...(rest as { credential: string }),
        ...(ref !== undefined && { user: userRef(r.actor, ref) }),
      }),
    );
  }),
  route('DELETE', '/projects/:project/upstreams/:alias/authorization', async (cp, r) => {
    const ref = optionalStr(r.query.get('user') ?? undefined, 'user');
    return ok(
      await cp.revokeUpstreamAuthorization(r.actor, p(r, 0), p(r, 1), {
        ...(ref !== undefined && { user: userRef(r.actor, ref) }),
      }),
    );
  }),
  route('GET', '/projects/:project/authorizations', async (cp, r) =>
    ok({ authorizations: await cp.listUpstreamAuthorizations(r.actor, p(r, 0)) }),
  ),

  // Retention: run a purge now (admin only)
  route('POST', '/retention/run', async (_cp, r, deps) => {
    if (r.actor.kind !== 'admin') throw new HttpError('forbidden', 'Only the administrator runs retention');
    const extra = Object.keys(r.body).filter((k) => k !== 'kind');
    if (extra.length > 0) throw new HttpError('invalid', `Unknown field "${extra[0]}"`);
    const kind = r.body['kind'];
    if (kind !== 'payloads' && kind !== 'metadata') {
      throw new HttpError('invalid', '"kind" must be "payloads" or "metadata"');
    }
    if (!deps.runRetention) throw new HttpError('invalid', 'Retention is not available here', 503);
    return { status: 202, body: await deps.runRetention(kind) };
  }),

  // Audit
  route('GET', '/projects/:project/audit', async (cp, r) =>
    ok({ events: await cp.listAudit(r.actor, { project: p(r, 0), ...pageOf(r.query) }) }),
  ),
  route('GET', '/audit', async (cp, r) => {
    // The instance-wide trail is the administrator's, filtered or not; managers read their project's
    // trail at /projects/{project}/audit (docs/admin.md).
    if (r.actor.kind !== 'admin') throw new HttpError('forbidden', 'Only the administrator reads /audit');
    const project = r.query.get('project') ?? undefined;
    return ok({ events: await cp.listAudit(r.actor, { ...(project && { project }), ...pageOf(r.query) }) });
  }),
];

/** An upstream's view, as the caller may see it (managers only). */
async function upstreamView(
  cp: ControlPlaneStore,
  r: Request,
  deps: AdminApiDeps,
  alias: string,
): Promise<UpstreamView> {
  const found = (await cp.listUpstreams(r.actor, p(r, 0))).find((u) => u.alias === alias || u.id === alias);
  if (!found) throw new HttpError('not_found', `No upstream "${alias}" in project "${p(r, 0)}"`);
  return upstreamShown(found, deps);
}

/** An upstream view with `hosting.unmatched` when this process knows the upstream's tools. */
function upstreamShown(view: UpstreamView, deps: AdminApiDeps): UpstreamView {
  const tools = view.hosting && deps.knownTools?.(view.id);
  if (!view.hosting || !tools) return view;
  return { ...view, hosting: { ...view.hosting, unmatched: unmatchedRules(view.hosting, tools) } };
}

function projectShown(view: ProjectView, deps: AdminApiDeps): ProjectView {
  return { ...view, upstreams: view.upstreams.map((u) => upstreamShown(u, deps)) };
}

/** Probes the upstream (when this process can) and answers its view with the outcome. */
async function probed(
  cp: ControlPlaneStore,
  r: Request,
  deps: AdminApiDeps,
  alias: string,
): Promise<UpstreamView> {
  if (deps.probeUpstream) {
    await deps
      .probeUpstream(p(r, 0), alias)
      .catch((err: unknown) => deps.logger?.error({ err, upstream: alias }, 'upstream probe failed to run'));
  }
  return upstreamView(cp, r, deps, alias);
}

function pageOf(query: URLSearchParams): { limit?: number; before?: string } {
  const limit = query.get('limit');
  const before = query.get('before');
  if (limit !== null && !/^\d{1,4}$/.test(limit)) throw new HttpError('invalid', '"limit" must be a number');
  return { ...(limit !== null && { limit: Number(limit) }), ...(before !== null && { before }) };
}

const ALL_ROUTES = [...ROUTES, ...APPROVAL_ROUTES];

export function adminApi(deps: AdminApiDeps): Middleware {
  const limit = deps.maxBodyBytes ?? 64 * 1024;
  const answerErrors = restErrors({
    realm: 'taskrouter-admin',
    label: 'admin API',
    ...(deps.logger && { logger: deps.logger }),
  });
  return async (ctx: Context, next) => {
    if (ctx.path !== PREFIX && !ctx.path.startsWith(`${PREFIX}/`)) return next();
    ctx.set('Cache-Control', 'no-store');
    await answerErrors(ctx, async () => {
      const matched = matchRoute(ALL_ROUTES, ctx.method, ctx.path.slice(PREFIX.length));
      // Authenticate before revealing anything about the route table.
      const actor = await principalOf(ctx, deps.controlPlane, deps.adminToken);
      const { route: found, params } = requireRoute(ctx, matched, 'admin endpoint');
      const body = ['POST', 'PUT', 'PATCH'].includes(ctx.method) ? await readJson(ctx, limit) : {};
      const query = new URLSearchParams(ctx.querystring);
      writeReply(ctx, await found.handler(deps.controlPlane, { actor, params, body, query }, deps));
    });
  };
}
