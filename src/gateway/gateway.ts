/**
 * The gateway's decisions for one MCP request of a project: which upstream owns it, whether a tools/call
 * takes the durable task path, cache and response limits on ordinary results, and how task follow-ups
 * are checked and answered. Transport-free: the API hands it a validated request and writes what it
 * returns or throws.
 */
import type { Logger } from 'pino';
import type {
  CallToolParams,
  ClientCapabilities,
  DiscoverResult,
  Implementation,
  InputResponses,
  JsonRpcErrorObject,
  RequestMeta,
  ServerCapabilities,
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
  PROTOCOL_VERSION,
  ProtocolError,
  RelayedError,
  SUPPORTED_PROTOCOL_VERSIONS,
  TASKS_EXTENSION,
  TERMINAL_TASK_STATUSES,
  UpdateTaskParamsSchema,
} from '../protocol';
import type { ControlPlane, Principal, ProjectRecord, UpstreamRecord } from '../store/control-plane/types';
import { principalId } from '../store/control-plane/types';
import type { PayloadKind, PayloadStore } from '../store/payload-store';
import { snapshotKey } from '../store/snapshot-key';
import type { TaskRecord, TaskStore } from '../store/task-store';
import { taskKeyOf } from '../store/task-store';
import type { TaskEngine } from '../temporal/task-engine';
import type { UpstreamClient, UpstreamEndpoint } from '../upstream/client';
import type { DiscoveryCache } from '../upstream/discovery';
import { UpstreamTransportError } from '../upstream/errors';
import { relayableMeta, upstreamMeta } from '../upstream/meta';
import type { UpstreamCallPayload } from '../workflows/messages';
import { taskWorkflowId } from '../workflows/messages';
import type { UpstreamCatalog } from './catalog';
import { resolveEndpoint } from './credentials';
import { decodeCursor, encodeCursor } from './cursor';
import { exposedName } from './naming';
import { declaresTasks, qualifyForTaskPath } from './qualification';
import { applyResponseLimits } from './response-limits';
import type { ResultCache } from './result-cache';
import { cacheKey, isCacheableCall, isCacheableResult } from './result-cache';
import { createTaskResult, getTaskResult, withGatewayMeta } from './responses';
import type { Resolve, ResolvedEndpoint, RoutedTool } from './routing';
import { enabledUpstreams, Router } from './routing';
import { mintTaskId } from './task-ids';

export interface GatewayDeps {
  controlPlane: ControlPlane;
  upstream: UpstreamClient;
  discovery: DiscoveryCache;
  catalog: UpstreamCatalog;
  cache: ResultCache;
  engine: TaskEngine;
  store: TaskStore;
  payloads: PayloadStore;
  serverInfo: Implementation;
  logger: Logger;
  startTimeoutMs: number;
  /** How long tasks/get waits for the live workflow before answering from the store. */
  snapshotQueryTimeoutMs?: number;
}

export interface McpCall {
  project: ProjectRecord;
  /** Who calls; decides the upstream credentials used and owns the tasks started. */
  principal: Principal;
  method: string;
  params: Record<string, unknown> & { _meta: RequestMeta };
  signal?: AbortSignal;
  /** Relays an upstream notification (progress, log message) on this request's response stream. */
  notify?: (message: Record<string, unknown>) => void;
  /** A request header by lower-case name. */
  header?: (name: string) => string | undefined;
}

type Result = Record<string, unknown>;

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

/** Cache hint used when an upstream failed to answer a list: retry soon rather than trust a partial list. */
const DEGRADED_LIST_TTL_MS = 5_000;

interface ListSpec {
  method: string;
  field: string;
  /** Renames (namespacing) or drops an item; `alias` is the owning upstream. */
  map?: (alias: string, item: Record<string, unknown>) => Record<string, unknown> | undefined;
}

export class McpGateway {
  private readonly router: Router;
  private readonly resolved = new WeakMap<McpCall, Map<string, Promise<ResolvedEndpoint>>>();

  constructor(private readonly deps: GatewayDeps) {
    this.router = new Router(deps.catalog);
  }

  async handle(call: McpCall): Promise<Result> {
    switch (call.method) {
      case METHOD.discover:
        return this.discover(call);
      case METHOD.toolsList:
        return this.listTools(call);
      case METHOD.toolsCall:
        return this.callTool(call, parseParams(CallToolParamsSchema, call.params));
      case 'prompts/list':
        await this.requireCapability(call, 'prompts');
        return this.list(call, { method: call.method, field: 'prompts', map: this.renamer(call.project) });
      case 'prompts/get':
        await this.requireCapability(call, 'prompts');
        return this.getPrompt(call);
      case 'resources/list':
      case 'resources/templates/list':
        await this.requireCapability(call, 'resources');
        return this.list(call, {
          method: call.method,
          field: call.method === 'resources/list' ? 'resources' : 'resourceTemplates',
        });
      case 'resources/read':
        await this.requireCapability(call, 'resources');
        return this.readResource(call);
      case 'completion/complete':
        await this.requireCapability(call, 'completions');
        return this.complete(call);
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

  // ── discovery ────────────────────────────────────────────────────────────────────────────────────

  private async discover(call: McpCall): Promise<Result> {
    const { capabilities, ttlMs } = await this.capabilities(call);
    return withGatewayMeta(
      {
        resultType: 'complete',
        supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
        capabilities,
        ttlMs,
        cacheScope: 'public',
      },
      this.deps.serverInfo,
    );
  }

  /**
   * The project's capabilities: the union of what its reachable upstreams currently advertise, and the
   * Tasks extension only when the project's gate is on and some upstream can run tasks.
   */
  private async capabilities(call: McpCall): Promise<{ capabilities: ServerCapabilities; ttlMs: number }> {
    const project = call.project;
    const resolve = this.resolver(call);
    const settled = await Promise.allSettled(
      enabledUpstreams(project).map(async (u) => this.deps.discovery.get(await resolve(u))),
    );
    const discovered = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const has = (key: keyof ServerCapabilities) => discovered.some((d) => d.capabilities[key] !== undefined);
    const tasks =
      project.features.tasks &&
      project.toolProfile === 'tasks' &&
      discovered.some((d) => upstreamRunsTasks(d));
    const ttls = discovered.map((d) => d.ttlMs);
    const degraded = discovered.length < settled.length;
    return {
      capabilities: {
        tools: {},
        ...(has('prompts') && { prompts: {} }),
        ...(has('resources') && { resources: {} }),
        ...(has('completions') && { completions: {} }),
        ...(tasks && { extensions: { [TASKS_EXTENSION]: {} } }),
      },
      ttlMs: Math.min(60_000, ...ttls, ...(degraded ? [DEGRADED_LIST_TTL_MS] : [])),
    };
  }

  /** Methods behind a capability the project does not advertise do not exist for its clients. */
  private async requireCapability(
    call: McpCall,
    key: 'prompts' | 'resources' | 'completions',
  ): Promise<void> {
    const { capabilities } = await this.capabilities(call);
    if (capabilities[key] === undefined)
      throw new ProtocolError('MethodNotFound', `Method not found: ${call.method}`);
  }

  // ── lists ────────────────────────────────────────────────────────────────────────────────────────

  private async listTools(call: McpCall): Promise<Result> {
    const project = call.project;
    const colliding =
      !project.namespacing && enabledUpstreams(project).length > 1
        ? await this.router.collisions(project, 'tool', this.resolver(call))
        : new Map<string, string[]>();
    for (const [name, aliases] of colliding) {
      this.deps.logger.warn(
        { project: project.slug, tool: name, upstreams: aliases },
        'tool name collision; hidden',
      );
    }
    const rename = this.renamer(project);
    return this.list(call, {
      method: METHOD.toolsList,
      field: 'tools',
      map: (alias, tool) => {
        if (colliding.has(String(tool.name))) return undefined;
        // Tools whose `x-mcp-header` annotations are invalid must be dropped by clients; the gateway is one.
        if (paramHeadersOf(tool.inputSchema) === undefined) {
          this.deps.logger.warn(
            { upstream: alias, tool: tool.name },
            'tool with invalid x-mcp-header dropped',
          );
          return undefined;
        }
        return rename(alias, tool);
      },
    });
  }

  private renamer(project: ProjectRecord) {
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
  private async list(call: McpCall, spec: ListSpec): Promise<Result> {
    const { cursor, ...params } = call.params;
    const upstreams = enabledUpstreams(call.project);
    const pending = typeof cursor === 'string' ? decodeCursor(cursor) : undefined;
    const targets = pending ? upstreams.filter((u) => pending[u.alias] !== undefined) : upstreams;
    const resolve = this.resolver(call);
    const settled = await Promise.allSettled(
      targets.map(async (u) =>
        this.forward(await resolve(u), call, spec.method, {
          ...params,
          ...(pending?.[u.alias] !== undefined && { cursor: pending[u.alias] }),
        }),
      ),
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
        this.deps.logger.warn(
          { project: call.project.slug, upstream: alias, method: spec.method },
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
      this.deps.serverInfo,
    );
  }

  // ── prompts, resources, completion ───────────────────────────────────────────────────────────────

  private async getPrompt(call: McpCall): Promise<Result> {
    const name = call.params.name;
    if (typeof name !== 'string') throw new ProtocolError('InvalidParams', 'params.name must be a string');
    const routed = await this.router.prompt(call.project, name, this.resolver(call));
    const result = await this.forward(routed.endpoint, call, 'prompts/get', {
      ...call.params,
      name: routed.name,
    });
    return withGatewayMeta(result, this.deps.serverInfo);
  }

  private async readResource(call: McpCall): Promise<Result> {
    if (typeof call.params.uri !== 'string')
      throw new ProtocolError('InvalidParams', 'params.uri must be a string');
    return withGatewayMeta(await this.firstOwner(call, 'resources/read', call.params), this.deps.serverInfo);
  }

  private async complete(call: McpCall): Promise<Result> {
    const ref = call.params.ref as { type?: unknown; name?: unknown; uri?: unknown } | undefined;
    if (ref?.type === 'ref/prompt' && typeof ref.name === 'string') {
      const routed = await this.router.prompt(call.project, ref.name, this.resolver(call));
      const params = { ...call.params, ref: { ...ref, name: routed.name } };
      return withGatewayMeta(
        await this.forward(routed.endpoint, call, call.method, params),
        this.deps.serverInfo,
      );
    }
    if (ref?.type === 'ref/resource' && typeof ref.uri === 'string') {
      return withGatewayMeta(await this.firstOwner(call, call.method, call.params), this.deps.serverInfo);
    }
    throw new ProtocolError('InvalidParams', 'params.ref must be a prompt or resource reference');
  }

  /**
   * Resources keep their URIs (they are not renamed), so the owner is the first upstream that does not
   * answer "not found" (-32602).
   */
  private async firstOwner(call: McpCall, method: string, params: Result): Promise<Result> {
    let lastError: unknown = new ProtocolError('InvalidParams', 'Resource not found');
    const resolve = this.resolver(call);
    for (const upstream of enabledUpstreams(call.project)) {
      try {
        return await this.forward(await resolve(upstream), call, method, params);
      } catch (err) {
        const notHere = err instanceof RelayedError && err.code === -32602;
        const noCredential = err instanceof ProtocolError && err.kind === 'UpstreamAuthorizationMissing';
        if (!notHere && !noCredential) throw err;
        lastError = err;
      }
    }
    throw lastError;
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

  /** The caller's credential for each upstream, looked up once per request. */
  private resolver(call: McpCall): Resolve {
    let memo = this.resolved.get(call);
    if (!memo) {
      memo = new Map();
      this.resolved.set(call, memo);
    }
    const cache = memo;
    return (upstream: UpstreamRecord) => {
      let endpoint = cache.get(upstream.id);
      if (!endpoint) {
        endpoint = resolveEndpoint(this.deps.controlPlane, call.principal, call.project, upstream);
        cache.set(upstream.id, endpoint);
      }
      return endpoint;
    };
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

  // ── upstream I/O ─────────────────────────────────────────────────────────────────────────────────

  private async discoverUpstream(endpoint: UpstreamEndpoint): Promise<DiscoverResult> {
    try {
      return await this.deps.discovery.get(endpoint);
    } catch (err) {
      throw upstreamUnavailable(endpoint, err);
    }
  }

  /**
   * Ordinary path: relays the request with the client's capabilities minus Tasks (the gateway never
   * lets an upstream hand a task past it), relays notifications on the client's stream, and aborts when
   * the client goes away.
   */
  private async forward(
    endpoint: ResolvedEndpoint,
    call: McpCall,
    method: string,
    params: Result,
    headers?: Record<string, string>,
  ): Promise<Result> {
    const meta = call.params._meta;
    const { extensions, ...rest }: ClientCapabilities = meta[META.clientCapabilities];
    const { [TASKS_EXTENSION]: _tasks, ...otherExtensions } = extensions ?? {};
    const capabilities =
      Object.keys(otherExtensions).length > 0 ? { ...rest, extensions: otherExtensions } : rest;
    let reply;
    try {
      reply = await this.deps.upstream.send(
        endpoint,
        method,
        {
          ...params,
          _meta: upstreamMeta({
            relayedMeta: relayableMeta(meta),
            protocolVersion: meta[META.protocolVersion],
            capabilities,
            gatewayInfo: this.deps.serverInfo,
          }),
        },
        {
          ...(call.signal && { signal: call.signal }),
          ...(call.notify && { onNotification: call.notify }),
          ...(headers && { headers }),
        },
      );
    } catch (err) {
      throw upstreamUnavailable(endpoint, err);
    }
    if (reply.kind === 'error')
      throw new RelayedError(reply.error.code, reply.error.message, reply.error.data);
    return reply.result;
  }
}

function upstreamRunsTasks(d: DiscoverResult): boolean {
  return (
    d.supportedVersions.includes(PROTOCOL_VERSION) &&
    d.capabilities.extensions?.[TASKS_EXTENSION] !== undefined
  );
}

function isIdempotent(tool: Tool | undefined): boolean {
  return tool?.annotations?.idempotentHint === true;
}

function parseParams<T>(
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } },
  v: unknown,
): T {
  const parsed = schema.safeParse(v);
  if (!parsed.success) throw new ProtocolError('InvalidParams', 'Invalid params');
  return parsed.data;
}

function declaresFormElicitation(c: ClientCapabilities): boolean {
  // `elicitation: {}` means form only, per 2026-07-28.
  return c.elicitation !== undefined && (c.elicitation.form !== undefined || c.elicitation.url === undefined);
}

function upstreamUnavailable(endpoint: UpstreamEndpoint, err: unknown): ProtocolError {
  const detail = err instanceof UpstreamTransportError ? err.message : `Upstream "${endpoint.alias}" failed`;
  return new ProtocolError('UpstreamUnavailable', detail, { upstream: endpoint.alias });
}

function errorName(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
