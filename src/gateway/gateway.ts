/**
 * The gateway's decisions for one MCP request of a project: which upstream owns it, whether a tools/call
 * takes the durable task path, cache and response limits on ordinary results, and how task follow-ups
 * are checked and answered. Transport-free: the API hands it a validated request and writes what it
 * returns or throws.
 */
import type {
  CallToolParams,
  DiscoverResult,
  InputResponses,
  JsonRpcErrorObject,
  TaskSnapshot,
  Tool,
} from '../protocol';
import {
  CallToolParamsSchema,
  CancelTaskParamsSchema,
  GetTaskParamsSchema,
  META,
  METHOD,
  paramHeaderMismatch,
  paramHeadersOf,
  paramHeaderValues,
  ProtocolError,
  RelayedError,
  TASKS_EXTENSION,
  TERMINAL_TASK_STATUSES,
  UpdateTaskParamsSchema,
} from '../protocol';
import type { ProjectRecord } from '../store/control-plane-types';
import { principalId } from '../store/control-plane-types';
import type { PayloadKind } from '../store/payload-store';
import { snapshotKey } from '../store/snapshot-key';
import type { TaskRecord } from '../store/task-store';
import { taskKeyOf } from '../store/task-store';
import type { UpstreamEndpoint } from '../upstream/client';
import { relayableMeta } from '../upstream/meta';
import type { UpstreamCallPayload } from '../workflows/messages';
import { taskWorkflowId } from '../workflows/messages';
import type { GatewayDeps, McpCall, RequestContext, Result } from './context';
import { errorName, parseParams } from './context';
import { CallResolvers, discoverUpstream, forward } from './forwarding';
import { discover, listPrompts, listResources, listTools, requireCapability } from './listing';
import { complete, getPrompt, readResource } from './prompts-resources';
import {
  declaresFormElicitation,
  declaresTasks,
  qualifyForTaskPath,
  upstreamRunsTasks,
} from './qualification';
import { applyResponseLimits } from './response-limits';
import { cacheKey, isCacheableCall, isCacheableResult } from './result-cache';
import { createTaskResult, getTaskResult, withGatewayMeta } from './responses';
import type { Resolve, ResolvedEndpoint, RoutedTool } from './routing';
import { enabledUpstreams, Router } from './routing';
import { mintTaskId } from './task-ids';

export type { GatewayDeps, McpCall } from './context';

/** Gateway-owned `_meta` key telling the client a result came from the result cache. */
export const CACHE_META_KEY = 'com.taskrouter/cache';

/** Methods this gateway answers; anything else is -32601. */
export const GATEWAY_METHODS: ReadonlySet<string> = new Set([
  ...Object.values(METHOD),
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'completion/complete',
]);

export class McpGateway {
  private readonly router: Router;
  private readonly resolvers: CallResolvers;

  constructor(private readonly deps: GatewayDeps) {
    this.router = new Router(deps.catalog);
    this.resolvers = new CallResolvers(deps.controlPlane);
  }

  async handle(call: McpCall): Promise<Result> {
    const ctx = this.context(call);
    switch (call.method) {
      case METHOD.discover:
        return discover(ctx);
      case METHOD.toolsList:
        return listTools(ctx);
      case METHOD.toolsCall:
        return this.callTool(call, parseParams(CallToolParamsSchema, call.params));
      case 'prompts/list':
        await requireCapability(ctx, 'prompts');
        return listPrompts(ctx);
      case 'prompts/get':
        await requireCapability(ctx, 'prompts');
        return getPrompt(ctx);
      case 'resources/list':
      case 'resources/templates/list':
        await requireCapability(ctx, 'resources');
        return listResources(ctx);
      case 'resources/read':
        await requireCapability(ctx, 'resources');
        return readResource(ctx);
      case 'completion/complete':
        await requireCapability(ctx, 'completions');
        return complete(ctx);
      case METHOD.tasksGet:
        return this.getTask(call);
      case METHOD.tasksUpdate:
        return this.updateTask(call);
      case METHOD.tasksCancel:
        return this.cancelTask(call);
      default:
        throw new ProtocolError('MethodNotFound', `Method not found: ${call.method}`);
    }
  }

  // ── tools/call ───────────────────────────────────────────────────────────────────────────────────

  private async callTool(call: McpCall, params: CallToolParams): Promise<Result> {
    const routed = await this.router.tool(call.project, params.name, this.resolver(call));
    const headers = this.paramHeaders(call, routed, params);
    const capabilities = call.params._meta[META.clientCapabilities];
    const isRetry = params.inputResponses !== undefined || params.requestState !== undefined;
    // MRTR retries of a task-aware call stay on the task path: the last round may become a task.
    if (declaresTasks(capabilities)) {
      const decision = qualifyForTaskPath({
        clientCapabilities: capabilities,
        protocolVersion: call.params._meta[META.protocolVersion],
        projectTasksEnabled: call.project.features.tasks,
        profileSupportsTasks: call.project.toolProfile === 'tasks',
        upstreamDiscover: await this.discoverUpstream(routed.endpoint),
      });
      if (decision.taskPath) return this.startTask(call, params, routed, headers);
      this.deps.logger.debug({ project: call.project.slug, reason: decision.reason }, 'ordinary path');
    }
    return this.ordinaryCall(call, params, routed, headers, isRetry);
  }

  /** Validates the client's `Mcp-Param-*` headers and derives the upstream's from its own schema. */
  private paramHeaders(call: McpCall, routed: RoutedTool, params: CallToolParams): Record<string, string> {
    const declared = routed.tool ? paramHeadersOf(routed.tool.inputSchema) : undefined;
    if (!declared || declared.length === 0) return {};
    const mismatch = paramHeaderMismatch(declared, params.arguments, (n) => call.header?.(n));
    if (mismatch) throw new ProtocolError('HeaderMismatch', mismatch);
    return paramHeaderValues(declared, params.arguments);
  }

  private async ordinaryCall(
    call: McpCall,
    params: CallToolParams,
    routed: RoutedTool,
    headers: Record<string, string>,
    isRetry: boolean,
  ): Promise<Result> {
    const project = call.project;
    const cacheable = isCacheableCall({
      cache: project.cache,
      exposedName: params.name,
      ...(routed.tool?.annotations && { annotations: routed.tool.annotations }),
      isMrtrRetry: isRetry,
    });
    const key = cacheable
      ? cacheKey({
          project: project.slug,
          upstream: routed.endpoint.alias,
          tool: routed.name,
          arguments: params.arguments ?? {},
          caller: principalId(call.principal),
        })
      : undefined;
    const hit = key !== undefined ? this.deps.cache.get(project.slug, key) : undefined;
    if (hit)
      return this.finish(project, { ...hit, _meta: { ...(hit._meta as Result), [CACHE_META_KEY]: 'hit' } });

    const result = await this.forward(
      routed.endpoint,
      call,
      METHOD.toolsCall,
      { ...call.params, name: routed.name },
      headers,
    );
    if (result.resultType === 'task') {
      throw new ProtocolError(
        'InternalError',
        `Upstream "${routed.endpoint.alias}" answered with an unrequested task`,
      );
    }
    if (key !== undefined && isCacheableResult(result))
      this.deps.cache.set(project.slug, key, result, project.cache);
    return this.finish(project, result);
  }

  /**
   * Response processing for a non-task tools/call result: the gateway's meta first, so the limit
   * measures exactly what the client receives.
   */
  private finish(project: ProjectRecord, result: Result): Result {
    return applyResponseLimits(withGatewayMeta(result, this.deps.serverInfo), project.limits).result;
  }

  private async startTask(
    call: McpCall,
    params: CallToolParams,
    routed: RoutedTool,
    headers: Record<string, string>,
  ): Promise<Result> {
    const taskId = mintTaskId();
    const taskKey = taskKeyOf(taskId);
    const capabilities = call.params._meta[META.clientCapabilities];
    // The payload goes to the payload store; Temporal gets its id only.
    const request: UpstreamCallPayload = {
      ...(params.arguments !== undefined && { arguments: params.arguments }),
      ...(params.inputResponses !== undefined && { inputResponses: params.inputResponses }),
      ...(params.requestState !== undefined && { requestState: params.requestState }),
      relayedMeta: relayableMeta(call.params._meta),
      ...(Object.keys(headers).length > 0 && { headers }),
    };
    const requestRef = await this.deps.payloads.put(taskKey, 'request', request);
    let outcome;
    try {
      outcome = await this.deps.engine.start(
        {
          taskKey,
          project: call.project.id,
          projectSlug: call.project.slug,
          upstream: routed.endpoint.alias,
          caller: principalId(call.principal),
          principal: call.principal,
          authorizationId: routed.endpoint.authorizationId,
          createdAt: new Date().toISOString(),
          call: {
            tool: routed.name,
            requestRef,
            protocolVersion: call.params._meta[META.protocolVersion],
            elicitationForm: declaresFormElicitation(capabilities),
            idempotent: isIdempotent(routed.tool),
          },
        },
        this.deps.startTimeoutMs,
      );
    } catch (err) {
      this.deps.logger.error({ err: errorName(err), project: call.project.slug }, 'task start failed');
      throw new ProtocolError(
        'TaskEngineUnavailable',
        'The gateway could not start the task; try again later',
      );
    }
    switch (outcome.kind) {
      case 'task': {
        // Durable before return: the workflow recorded the task (with its detail) before answering.
        const record = await this.deps.store.getTask(taskKey);
        if (!record) throw new ProtocolError('InternalError', 'The task was not recorded');
        return createTaskResult(taskId, record.snapshot, this.deps.serverInfo);
      }
      case 'result': {
        // A synchronous answer on the task path is processed like any result, but never cached.
        const result = await this.payload<Result>(outcome.resultRef, taskKey, 'result');
        return this.finish(call.project, result);
      }
      case 'error': {
        const error =
          'errorRef' in outcome
            ? await this.payload<JsonRpcErrorObject>(outcome.errorRef, taskKey, 'error')
            : outcome.error;
        throw new RelayedError(error.code, error.message, error.data);
      }
    }
  }

  // ── task follow-ups ──────────────────────────────────────────────────────────────────────────────

  private async getTask(call: McpCall): Promise<Result> {
    const params = parseParams(GetTaskParamsSchema, call.params);
    const task = await this.ownedTask(call, taskKeyOf(params.taskId));
    // Payload retention removed the result (docs/retention.md); the metadata stays until its own purge.
    if (task.payloadExpired)
      throw new ProtocolError('InvalidParams', 'Failed to retrieve task: Task has expired');
    return getTaskResult(params.taskId, await this.currentSnapshot(task), this.deps.serverInfo);
  }

  private async updateTask(call: McpCall): Promise<Result> {
    const params = parseParams(UpdateTaskParamsSchema, call.params);
    await this.answerTaskInput(call, taskKeyOf(params.taskId), params.inputResponses);
    return this.ack();
  }

  private async cancelTask(call: McpCall): Promise<Result> {
    const params = parseParams(CancelTaskParamsSchema, call.params);
    await this.cancelTaskByKey(call, taskKeyOf(params.taskId));
    return this.ack();
  }

  // The two protocol controls, by task key: `tasks/update` and `tasks/cancel` above and the dashboard's
  // answer and cancel buttons (src/api/dashboard) go through these, so both apply the same checks.

  /** Relays form answers to a task of this caller (tasks/update); a terminal task ignores them. */
  async answerTaskInput(call: McpCall, taskKey: string, inputResponses: InputResponses): Promise<void> {
    const task = await this.ownedTask(call, taskKey);
    if (TERMINAL_TASK_STATUSES.has(task.snapshot.status)) return;
    if (Object.keys(inputResponses).length > 0) {
      // Answers relay form elicitation only, so the request answering must itself declare form support.
      if (!declaresFormElicitation(call.params._meta[META.clientCapabilities])) {
        throw new ProtocolError(
          'MissingRequiredClientCapability',
          'Answering input requires form elicitation',
          {
            requiredCapabilities: { elicitation: { form: {} } },
          },
        );
      }
      await this.requireUpstreamTasks(call, task, 'tasks/update');
    }
    const keys = Object.keys(inputResponses);
    const ref = await this.deps.payloads.put(task.taskKey, 'input_responses', inputResponses);
    await this.recordRequest(() => this.deps.engine.provideInput(task.workflowId, { ref, keys }));
  }

  /** Cancels a task of this caller (tasks/cancel); the upstream's refusal is the caller's error. */
  async cancelTaskByKey(call: McpCall, taskKey: string): Promise<void> {
    const task = await this.ownedTask(call, taskKey);
    if (TERMINAL_TASK_STATUSES.has(task.snapshot.status)) return;
    await this.requireUpstreamTasks(call, task, 'tasks/cancel');
    const outcome = await this.recordRequest(() =>
      this.deps.engine.cancel(task.workflowId, this.deps.startTimeoutMs),
    );
    // The upstream refused: the client hears it, and nothing pretends the task was cancelled.
    if (!outcome.ok) throw new RelayedError(outcome.error.code, outcome.error.message, outcome.error.data);
  }

  private ack(): Result {
    return withGatewayMeta({ resultType: 'complete' }, this.deps.serverInfo);
  }

  /** The upstream's current discovery must still offer Tasks for a follow-up to be forwarded. */
  private async requireUpstreamTasks(call: McpCall, task: TaskRecord, operation: string): Promise<void> {
    const upstream = enabledUpstreams(call.project).find((u) => u.alias === task.upstream);
    if (!upstream) {
      throw new ProtocolError(
        'UpstreamRefused',
        `Upstream "${task.upstream}" is no longer available for ${operation}`,
      );
    }
    if (!upstreamRunsTasks(await this.discoverUpstream(await this.resolver(call)(upstream)))) {
      throw new ProtocolError(
        'UpstreamRefused',
        `Upstream "${task.upstream}" no longer supports ${operation}`,
      );
    }
  }

  /**
   * The task if it belongs to this project and caller, and the upstream authorization it started with
   * is still valid. A task of another project or caller gets the same answer as an unknown id (after the
   * same single lookup), so a foreign task is indistinguishable from a missing one. Every refusal is
   * audited; none has any other effect.
   */
  private async ownedTask(call: McpCall, taskKey: string): Promise<TaskRecord> {
    if (!declaresTasks(call.params._meta[META.clientCapabilities])) {
      throw new ProtocolError(
        'MissingRequiredClientCapability',
        'This request requires the Tasks extension',
        {
          requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
        },
      );
    }
    const task = await this.deps.store.getTask(taskKey);
    const caller = principalId(call.principal);
    const owned =
      task !== undefined &&
      task.project === call.project.id &&
      task.caller.kind === caller.kind &&
      task.caller.id === caller.id &&
      task.workflowId === taskWorkflowId(task.taskKey);
    if (!owned) {
      this.auditDenied(call, 'unknown or foreign task');
      throw new ProtocolError('InvalidParams', 'Failed to retrieve task: Task not found');
    }
    if (
      task.authorizationId !== null &&
      !(await this.deps.controlPlane.authorizationValid(task.authorizationId))
    ) {
      this.auditDenied(call, 'upstream authorization no longer valid');
      throw new ProtocolError(
        'UpstreamAuthorizationMissing',
        `The authorization for upstream "${task.upstream}" this task was started with is no longer valid`,
        { upstream: task.upstream },
      );
    }
    return task;
  }

  /** Not awaited: a refusal must not take longer (or shorter) because it is written down. */
  private auditDenied(call: McpCall, reason: string): void {
    const caller = principalId(call.principal);
    this.deps.controlPlane
      .audit({
        projectId: call.project.id,
        actor: `${caller.kind}:${caller.id}`,
        action: 'task.access_denied',
        detail: { reason },
      })
      .catch((err: unknown) => this.deps.logger.warn({ err: errorName(err) }, 'audit write failed'));
  }

  /**
   * The stored snapshot, refined by the live workflow while the task runs: the live view already hides
   * answered input keys, so it decides the status and which input requests are still open. It is used
   * only when it describes the same observation as the store (the store lags it by one write at most;
   * while all input is answered the store says `working` and is served as it is);
   * if no worker answers within 5 s, the stored snapshot is the answer.
   */
  async currentSnapshot(task: TaskRecord): Promise<TaskSnapshot> {
    const stored = task.snapshot;
    if (TERMINAL_TASK_STATUSES.has(stored.status)) return stored;
    let live;
    try {
      live = await this.deps.engine.snapshot(task.workflowId, this.deps.snapshotQueryTimeoutMs ?? 5_000);
    } catch (err) {
      this.deps.logger.warn({ err: errorName(err) }, 'snapshot query failed; answering from the store');
      return stored;
    }
    // Same observation only if the stored detail hashes to the live key (timestamps can tie).
    if (!live || live.key !== snapshotKey(stored)) return stored;
    const open = live.inputs ?? {};
    const inputRequests = Object.fromEntries(
      Object.entries(stored.inputRequests ?? {}).filter(([k]) => Object.hasOwn(open, k)),
    );
    const { inputRequests: _all, ...rest } = stored;
    return {
      ...rest,
      status: live.status,
      ...(live.status === 'input_required' && { inputRequests }),
    };
  }

  /** A payload the workflow just stored; missing only if it was purged in between. */
  private async payload<T>(ref: string, taskKey: string, kind: PayloadKind): Promise<T> {
    const value = await this.deps.payloads.get<T>(ref, taskKey, kind);
    if (value === undefined) throw new ProtocolError('InternalError', 'The result is no longer stored');
    return value;
  }

  /** Hands a follow-up to the task workflow; failing to record it is an error, never a silent drop. */
  private async recordRequest<T>(send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (err) {
      this.deps.logger.error({ err: errorName(err) }, 'task request not recorded');
      throw new ProtocolError('TaskEngineUnavailable', 'The gateway could not record the request; try again');
    }
  }

  // ── request context ──────────────────────────────────────────────────────────────────────────────

  private resolver(call: McpCall): Resolve {
    return this.resolvers.of(call);
  }

  private context(call: McpCall): RequestContext {
    return { deps: this.deps, router: this.router, call, resolve: this.resolver(call) };
  }

  private async forward(
    endpoint: ResolvedEndpoint,
    call: McpCall,
    method: string,
    params: Result,
    headers?: Record<string, string>,
  ): Promise<Result> {
    return forward(this.context(call), endpoint, method, params, headers);
  }

  private async discoverUpstream(endpoint: UpstreamEndpoint): Promise<DiscoverResult> {
    return discoverUpstream(this.deps.discovery, endpoint);
  }
}

function isIdempotent(tool: Tool | undefined): boolean {
  return tool?.annotations?.idempotentHint === true;
}
