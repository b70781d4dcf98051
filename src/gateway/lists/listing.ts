/**
 * What a project offers as a whole: `server/discover` with the capabilities its upstreams add up to, the
 * capability gate on prompts, resources and completion, and the aggregated, paginated lists (tools,
 * prompts, resources, resource templates) with their cache hints.
 */
import type { ApprovalToolHints } from '../../config/approvals';
import { needsApproval } from '../../config/approvals';
import { isHosted } from '../../config/hosting';
import type { ServerCapabilities } from '../../protocol';
import {
  METHOD,
  paramHeadersOf,
  ProtocolError,
  SUPPORTED_PROTOCOL_VERSIONS,
  TASKS_EXTENSION,
  UI_EXTENSION,
} from '../../protocol';
import type { ProjectRecord } from '../../store/control-plane/types';
import type { UpstreamEndpoint } from '../../upstream/client';
import type { RequestContext, Result } from '../context';
import { decodeCursor, encodeCursor } from '../cursor';
import { forward } from '../forwarding';
import type { ListKind } from '../push/list-push';
import { announcedKinds } from '../push/list-push';
import { exposedName } from '../naming';
import { upstreamRunsTasks } from '../calls/qualification';
import { announcesUpdates } from '../push/resource-push';
import { withGatewayMeta } from '../responses/responses';
import { enabledUpstreams } from '../name-owners';
import { exposedResourceEntry, uiExtensionOf, withExposedUiMeta } from './ui-resources';

/** Cache hint used when an upstream failed to answer a list: retry soon rather than trust a partial list. */
const DEGRADED_LIST_TTL_MS = 5_000;

interface ListSpec {
  method: string;
  field: string;
  /** Renames (namespacing) or drops an item; `alias` is the owning upstream. */
  map?: (alias: string, item: Record<string, unknown>) => Record<string, unknown> | undefined;
}

export async function discover(ctx: RequestContext): Promise<Result> {
  const { capabilities, ttlMs, personal } = await projectCapabilities(ctx);
  return withGatewayMeta(
    {
      resultType: 'complete',
      supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
      capabilities,
      ttlMs,
      // What upstreams reached with the caller's own credential offer is that caller's.
      cacheScope: personal ? 'private' : 'public',
    },
    ctx.deps.serverInfo,
  );
}

/**
 * The project's capabilities: the union of what its reachable upstreams currently advertise, and the
 * Tasks extension only when the project's gate is on and some upstream can run tasks or the gateway
 * hosts some upstream's tools.
 */
async function projectCapabilities(
  ctx: RequestContext,
): Promise<{ capabilities: ServerCapabilities; ttlMs: number; personal: boolean }> {
  const project = ctx.call.project;
  const resolve = ctx.resolve;
  let personal = false;
  const settled = await Promise.allSettled(
    enabledUpstreams(project).map(async (u) => {
      const endpoint = await resolve(u);
      if (endpoint.authorizationId !== null) personal = true;
      return ctx.deps.discovery.get(endpoint);
    }),
  );
  const discovered = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const has = (key: keyof ServerCapabilities) => discovered.some((d) => d.capabilities[key] !== undefined);
  // Relayed on subscriptions/listen (list-push.ts), so announced for the lists some upstream announces.
  const announced = new Set(discovered.flatMap((d) => announcedKinds(d)));
  const listChanged = (kind: ListKind) => (announced.has(kind) ? { listChanged: true } : {});
  // Resource updates are relayed from upstreams that announce them (resource-push.ts).
  const subscribe = discovered.some((d) => announcesUpdates(d)) && { subscribe: true };
  // Tasks run by an upstream, or by the gateway for the tools it hosts (issue 24, src/config/hosting.ts).
  const hosts =
    enabledUpstreams(project).some((u) => (u.hosting?.tools.length ?? 0) > 0) || !!project.approvals;
  const tasks =
    project.features.tasks &&
    project.toolProfile === 'tasks' &&
    (hosts || discovered.some((d) => upstreamRunsTasks(d)));
  // MCP Apps views are relayed (and renamed per upstream, ui-resources.ts): advertised when an upstream does.
  const ui = uiExtensionOf(discovered.map((d) => d.capabilities.extensions as Record<string, unknown>));
  const extensions = { ...(tasks && { [TASKS_EXTENSION]: {} }), ...(ui && { [UI_EXTENSION]: ui }) };
  const ttls = discovered.map((d) => d.ttlMs);
  const degraded = discovered.length < settled.length;
  return {
    capabilities: {
      tools: listChanged('tools'),
      ...(has('prompts') && { prompts: listChanged('prompts') }),
      ...(has('resources') && { resources: { ...listChanged('resources'), ...subscribe } }),
      ...(has('completions') && { completions: {} }),
      ...(Object.keys(extensions).length > 0 && { extensions }),
    },
    ttlMs: Math.min(60_000, ...ttls, ...(degraded ? [DEGRADED_LIST_TTL_MS] : [])),
    personal,
  };
}

/** Methods behind a capability the project does not advertise do not exist for its clients. */
export async function requireCapability(
  ctx: RequestContext,
  key: 'prompts' | 'resources' | 'completions',
): Promise<void> {
  const { capabilities } = await projectCapabilities(ctx);
  if (capabilities[key] === undefined)
    throw new ProtocolError('MethodNotFound', `Method not found: ${ctx.call.method}`);
}

export async function listTools(ctx: RequestContext): Promise<Result> {
  const { call, deps } = ctx;
  const project = call.project;
  const colliding =
    !project.namespacing && enabledUpstreams(project).length > 1
      ? await ctx.owners.collisions(project, 'tool', ctx.resolve)
      : new Map<string, string[]>();
  for (const [name, aliases] of colliding) {
    deps.logger.warn(
      { project: project.slug, tool: name, upstreams: aliases },
      'tool name collision; hidden',
    );
  }
  const rename = renamer(project);
  const taskCapable = call.tasks?.advertise ? await taskCapableAliases(ctx) : undefined;
  const hosted = call.tasks?.advertise ? hostedTools(project) : undefined;
  return list(ctx, {
    method: METHOD.toolsList,
    field: 'tools',
    map: (alias, tool) => {
      if (colliding.has(String(tool.name))) return undefined;
      // Tools whose `x-mcp-header` annotations are invalid must be dropped by clients; the gateway is one.
      if (paramHeadersOf(tool.inputSchema) === undefined) {
        deps.logger.warn({ upstream: alias, tool: tool.name }, 'tool with invalid x-mcp-header dropped');
        return undefined;
      }
      const exposed = withExposedUiMeta(alias, tool, project.namespacing);
      if (hosted?.(alias, tool.name, tool.annotations)) return rename(alias, withHostedTasks(exposed));
      return rename(alias, taskCapable?.has(alias) ? withOptionalTasks(exposed) : exposed);
    },
  });
}

/**
 * Upstreams whose tools may run as gateway tasks (for eras that mark tools). A tool the upstream runs
 * only as a task is still `optional` to the client: the gateway takes the task when the client does not.
 */
async function taskCapableAliases(ctx: RequestContext): Promise<Set<string>> {
  const project = ctx.call.project;
  if (!project.features.tasks || project.toolProfile !== 'tasks') return new Set();
  const checked = await Promise.allSettled(
    enabledUpstreams(project).map(async (u) => {
      const d = await ctx.deps.discovery.get(await ctx.resolve(u));
      return upstreamRunsTasks(d) ? u.alias : undefined;
    }),
  );
  return new Set(checked.flatMap((c) => (c.status === 'fulfilled' && c.value ? [c.value] : [])));
}

/**
 * Whether an upstream's tool (its own name) runs as the gateway's own task: hosted (issue 24,
 * src/config/hosting.ts) or waiting for approval (issue 27, src/config/approvals.ts), behind the same
 * project gate as upstream tasks.
 */
function hostedTools(
  project: ProjectRecord,
): (alias: string, name: unknown, annotations: unknown) => boolean {
  if (!project.features.tasks || project.toolProfile !== 'tasks') return () => false;
  const policies = new Map(enabledUpstreams(project).map((u) => [u.alias, u.hosting]));
  const approvals = project.approvals?.policy;
  return (alias, name, annotations) =>
    typeof name === 'string' &&
    (isHosted(policies.get(alias), name) ||
      needsApproval(approvals, alias, name, annotations as ApprovalToolHints | undefined));
}

/** A hosted tool takes a task whatever the upstream says of it: the gateway runs the task. */
function withHostedTasks(tool: Record<string, unknown>): Record<string, unknown> {
  const execution = (tool.execution as Record<string, unknown> | undefined) ?? {};
  return { ...tool, execution: { ...execution, taskSupport: 'optional' } };
}

function withOptionalTasks(tool: Record<string, unknown>): Record<string, unknown> {
  const execution = (tool.execution as Record<string, unknown> | undefined) ?? {};
  if (execution.taskSupport === 'forbidden') return tool;
  return { ...tool, execution: { ...execution, taskSupport: 'optional' } };
}

export async function listPrompts(ctx: RequestContext): Promise<Result> {
  return list(ctx, { method: ctx.call.method, field: 'prompts', map: renamer(ctx.call.project) });
}

/**
 * `resources/list` and `resources/templates/list`: resources keep their URIs, except MCP Apps views
 * (`ui://`), which are named per upstream with namespacing on (ui-resources.ts).
 */
export async function listResources(ctx: RequestContext): Promise<Result> {
  const method = ctx.call.method;
  const namespacing = ctx.call.project.namespacing;
  return list(ctx, {
    method,
    field: method === 'resources/list' ? 'resources' : 'resourceTemplates',
    map: (alias, entry) => exposedResourceEntry(alias, entry, namespacing),
  });
}

function renamer(project: ProjectRecord) {
  return (alias: string, item: Record<string, unknown>) =>
    typeof item.name === 'string'
      ? { ...item, name: exposedName(alias, item.name, project.namespacing) }
      : item;
}

/**
 * An aggregated, paginated list. The first page asks every enabled upstream; the opaque cursor carries
 * each upstream's own next cursor. Unreachable upstreams are left out (and logged), which shortens the
 * cache hint. Cache hints: the smallest `ttlMs`, and `private` if any upstream's answer is private.
 */
async function list(ctx: RequestContext, spec: ListSpec): Promise<Result> {
  const { call, deps } = ctx;
  const { cursor, ...params } = call.params;
  if (cursor !== undefined && typeof cursor !== 'string') {
    throw new ProtocolError('InvalidParams', 'params.cursor must be a string');
  }
  const upstreams = enabledUpstreams(call.project);
  const pending = typeof cursor === 'string' ? decodeCursor(cursor) : undefined;
  const targets = pending ? upstreams.filter((u) => pending[u.alias] !== undefined) : upstreams;
  const resolve = ctx.resolve;
  const settled = await Promise.allSettled(
    targets.map(async (u) => {
      const endpoint = await resolve(u);
      const result = await forward(ctx, endpoint, spec.method, {
        ...params,
        ...(pending?.[u.alias] !== undefined && { cursor: pending[u.alias] }),
      });
      // What one user's own credential shows is that user's: never for a cache shared across callers.
      return endpoint.authorizationId !== null ? { ...result, cacheScope: 'private' } : result;
    }),
  );
  const items: Record<string, unknown>[] = [];
  const next: Record<string, string> = {};
  let ttlMs = Number.POSITIVE_INFINITY;
  let cacheScope: 'public' | 'private' = 'public';
  let failures = 0;
  settled.forEach((s, i) => {
    const alias = (targets[i] as UpstreamEndpoint).alias;
    if (s.status === 'rejected') {
      failures++;
      const reason = s.reason instanceof Error ? s.reason.message : String(s.reason);
      deps.logger.warn(
        { project: call.project.slug, upstream: alias, method: spec.method, reason },
        'upstream left out of list',
      );
      return;
    }
    const r = s.value;
    for (const raw of Array.isArray(r[spec.field]) ? (r[spec.field] as Record<string, unknown>[]) : []) {
      const item = spec.map ? spec.map(alias, raw) : raw;
      if (item) items.push(item);
    }
    if (typeof r.nextCursor === 'string') next[alias] = r.nextCursor;
    ttlMs = Math.min(ttlMs, typeof r.ttlMs === 'number' ? r.ttlMs : 0);
    if (r.cacheScope === 'private') cacheScope = 'private';
  });
  if (targets.length > 0 && failures === targets.length) {
    const first = settled.find((s) => s.status === 'rejected');
    throw first?.status === 'rejected'
      ? first.reason
      : new ProtocolError('UpstreamUnavailable', 'No upstream answered');
  }
  if (failures > 0) ttlMs = Math.min(ttlMs, DEGRADED_LIST_TTL_MS);
  const nextCursor = encodeCursor(next);
  return withGatewayMeta(
    {
      resultType: 'complete',
      [spec.field]: items,
      ...(nextCursor !== undefined && { nextCursor }),
      ttlMs: Number.isFinite(ttlMs) ? ttlMs : 0,
      cacheScope,
    },
    deps.serverInfo,
  );
}
