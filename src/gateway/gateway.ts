/**
 * The gateway's entry point for one MCP request of a project: routes each method to the module that
 * answers it (listing, prompts and resources, tools/call, task follow-ups) with a per-request context.
 * Transport-free: the API hands it a validated request and writes what it returns or throws.
 */
import type { GatewayMethod, InputResponses, TaskSnapshot } from '../protocol';
import { CallToolParamsSchema, META, ProtocolError, capabilityFor, isGatewayMethod } from '../protocol';
import { inMcpServerSpan } from '../telemetry/mcp-spans';
import type { TaskRecord } from '../store/tasks/task-store';
import type { GatewayDeps, McpCall, RequestContext, Result } from './context';
import { parseParams, shareOwner } from './context';
import { CallResolvers } from './forwarding';
import { discover, listPrompts, listResources, listTools, requireCapability } from './lists/listing';
import { complete, getPrompt, readResource } from './lists/prompts-resources';
import { NameOwners } from './name-owners';
import {
  answerTaskInput,
  cancelTask,
  cancelTaskByKey,
  currentSnapshot,
  getTask,
  updateTask,
} from './tasks/task-methods';
import { resumeInlineTask } from './calls/inline-task';
import { listCallerTasks } from './tasks/task-list';
import type { FollowedTask } from './push/task-push';
import { followableTasks, pushedTask } from './push/task-push';
import type { ListWatchTarget } from './push/list-push';
import { listWatchTargets } from './push/list-push';
import type { ResourceWatchTarget } from './push/resource-push';
import { resourceWatchTargets } from './push/resource-push';
import { callTool } from './calls/tool-call';

export type { GatewayDeps, McpCall } from './context';
export type { FollowedTask } from './push/task-push';
export type { ListKind, ListWatchTarget } from './push/list-push';
export type { ResourceWatchTarget } from './push/resource-push';
export { CACHE_META_KEY } from './calls/ordinary-call';

/** The module that answers each method of the table (protocol/methods.ts) the gateway dispatches. */
const HANDLERS: Record<GatewayMethod, (ctx: RequestContext) => Promise<Result>> = {
  'server/discover': discover,
  'tools/list': listTools,
  'tools/call': (ctx) => callTool(ctx, parseParams(CallToolParamsSchema, ctx.call.params)),
  'prompts/list': listPrompts,
  'prompts/get': getPrompt,
  'resources/list': listResources,
  'resources/templates/list': listResources,
  'resources/read': readResource,
  'completion/complete': complete,
  'tasks/get': getTask,
  'tasks/update': updateTask,
  'tasks/cancel': cancelTask,
};

export class McpGateway {
  private readonly owners: NameOwners;
  private readonly resolvers: CallResolvers;

  constructor(private readonly deps: GatewayDeps) {
    this.owners = new NameOwners(deps.catalog);
    this.resolvers = new CallResolvers(deps.controlPlane);
  }

  /**
   * Answers one request, in the MCP server span whose parent is the trace context the client put in
   * `_meta` (telemetry/mcp-spans.ts; the upstream calls and the task workflow it starts continue it),
   * counted in its caller's and project's share of requests in flight (refused with -31013 before
   * anything is done when either is full).
   */
  async handle(call: McpCall): Promise<Result> {
    const lease = this.deps.shares.admitCall(shareOwner(call));
    try {
      const protocolVersion = call.params._meta[META.protocolVersion];
      return await inMcpServerSpan({ method: call.method, params: call.params, protocolVersion }, () =>
        this.route(call),
      );
    } finally {
      lease.release();
    }
  }

  private async route(call: McpCall): Promise<Result> {
    if (!isGatewayMethod(call.method)) {
      throw new ProtocolError('MethodNotFound', `Method not found: ${call.method}`);
    }
    const ctx = this.context(call);
    // A method of a capability the project's upstreams lack does not exist here (-32601 as well).
    const capability = capabilityFor(call.method);
    if (capability) await requireCapability(ctx, capability);
    return HANDLERS[call.method](ctx);
  }

  // The two protocol controls by task key, for the dashboard's answer and cancel buttons: the same code
  // (and so the same checks) as `tasks/update` and `tasks/cancel`.

  /** Relays form answers to a task of this caller (tasks/update); a terminal task ignores them. */
  async answerTaskInput(call: McpCall, taskKey: string, inputResponses: InputResponses): Promise<void> {
    return answerTaskInput(this.context(call), taskKey, inputResponses);
  }

  /** Cancels a task of this caller (tasks/cancel); the upstream's refusal is the caller's error. */
  async cancelTaskByKey(call: McpCall, taskKey: string): Promise<void> {
    return cancelTaskByKey(this.context(call), taskKey);
  }

  /** The caller's tasks in the project whose ids the gateway still keeps (2025-era `tasks/list`). */
  async listCallerTasks(call: McpCall, cursor: unknown): Promise<Result> {
    return listCallerTasks(this.context(call), cursor);
  }

  /** Which of these task ids the caller may follow on a listen stream (task-push.ts). */
  async followableTasks(call: McpCall, taskIds: readonly string[]): Promise<FollowedTask[]> {
    return followableTasks(this.context(call), taskIds);
  }

  /** A followed task as a `notifications/tasks` payload (undefined once the task is gone). */
  async pushedTask(call: McpCall, task: FollowedTask): Promise<Result | undefined> {
    return pushedTask(this.context(call), task);
  }

  /** The caller's project's upstreams that announce list changes, and which (list-push.ts). */
  async listWatchTargets(call: McpCall): Promise<ListWatchTarget[]> {
    return listWatchTargets(this.context(call));
  }

  /** Which of these URIs the caller can follow, by the upstream that serves them (resource-push.ts). */
  async resourceWatchTargets(call: McpCall, uris: readonly string[]): Promise<ResourceWatchTarget[]> {
    return resourceWatchTargets(this.context(call), uris);
  }

  /** Forgets this process's cached lists of one upstream and credential, before clients re-list. */
  dropCachedLists(scope: string): void {
    this.deps.catalog.invalidateKey(scope);
  }

  /**
   * Forgets what this process cached of one upstream with any credential (lists and `server/discover`):
   * it was changed through the control plane, perhaps re-pointed at another server under the same id.
   */
  dropUpstreamCaches(upstreamId: string): void {
    this.deps.catalog.invalidateUpstream(upstreamId);
    this.deps.discovery.invalidateUpstream(upstreamId);
  }

  /**
   * The call with its project as the control plane serves it now (after a change); undefined once the
   * project is gone or the caller may no longer call it.
   */
  async currentCall(call: McpCall): Promise<McpCall | undefined> {
    const project = await this.deps.controlPlane.projectById(call.project.id);
    if (!project || !(await this.deps.controlPlane.canCallProject(call.principal, project))) return undefined;
    return { ...call, project };
  }

  /** Waits again for a task of this caller that answers a call inline (a resumed response stream). */
  async resumeInlineTask(call: McpCall, taskId: string): Promise<Result> {
    return resumeInlineTask(this.context(call), taskId);
  }

  /** The task as its client sees it, from the store (see task-methods.ts). */
  async currentSnapshot(task: TaskRecord): Promise<TaskSnapshot> {
    return currentSnapshot(task);
  }

  private context(call: McpCall): RequestContext {
    return { deps: this.deps, owners: this.owners, call, resolve: this.resolvers.of(call) };
  }
}
