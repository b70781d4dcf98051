/**
 * The gateway's decisions for one MCP request of a project: which upstream owns it, whether a tools/call
 * takes the durable task path, and how task follow-ups are checked and answered. Transport-free: the API
 * hands it a validated request and writes what it returns or throws.
 */
import type { Logger } from 'pino';
import type { ProjectConfig } from '../config/config';
import type {
  CallToolParams,
  ClientCapabilities,
  Implementation,
  RequestMeta,
  TaskSnapshot,
} from '../protocol';
import {
  CallToolParamsSchema,
  CancelTaskParamsSchema,
  GetTaskParamsSchema,
  META,
  METHOD,
  ProtocolError,
  RelayedError,
  SUPPORTED_PROTOCOL_VERSIONS,
  TASKS_EXTENSION,
  TERMINAL_TASK_STATUSES,
  UpdateTaskParamsSchema,
} from '../protocol';
import type { Caller, TaskRecord, TaskStore } from '../store/task-store';
import { taskKeyOf } from '../store/task-store';
import type { TaskEngine } from '../temporal/task-engine';
import type { UpstreamClient, UpstreamEndpoint } from '../upstream/client';
import type { DiscoveryCache } from '../upstream/discovery';
import { UpstreamTransportError } from '../upstream/errors';
import { relayableMeta, upstreamMeta } from '../upstream/meta';
import { taskWorkflowId } from '../workflows/messages';
import type { ProjectRegistry } from './projects';
import { toEndpoint } from './projects';
import { declaresTasks, qualifyForTaskPath } from './qualification';
import { createTaskResult, getTaskResult, withGatewayMeta } from './responses';
import { mintTaskId } from './task-ids';

export interface GatewayDeps {
  projects: ProjectRegistry;
  upstream: UpstreamClient;
  discovery: DiscoveryCache;
  engine: TaskEngine;
  store: TaskStore;
  serverInfo: Implementation;
  logger: Logger;
  startTimeoutMs: number;
  /** How long tasks/get waits for the live workflow before answering from the store. */
  snapshotQueryTimeoutMs?: number;
}

export interface McpCall {
  project: ProjectConfig;
  caller: Caller;
  method: string;
  params: Record<string, unknown> & { _meta: RequestMeta };
  signal?: AbortSignal;
}

type Result = Record<string, unknown>;

/** Methods this gateway answers; anything else is -32601. */
export const GATEWAY_METHODS: ReadonlySet<string> = new Set(Object.values(METHOD));

export class McpGateway {
  constructor(private readonly deps: GatewayDeps) {}

  async handle(call: McpCall): Promise<Result> {
    switch (call.method) {
      case METHOD.discover:
        return this.discover(call);
      case METHOD.toolsList:
        return this.listTools(call);
      case METHOD.toolsCall:
        return this.callTool(call, parseParams(CallToolParamsSchema, call.params));
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

  private discover(call: McpCall): Result {
    return withGatewayMeta(
      {
        resultType: 'complete',
        supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
        capabilities: {
          tools: {},
          ...(call.project.features.tasks && { extensions: { [TASKS_EXTENSION]: {} } }),
        },
        ttlMs: 60_000,
        cacheScope: 'public',
      },
      this.deps.serverInfo,
    );
  }

  private async listTools(call: McpCall): Promise<Result> {
    const endpoint = this.route(call.project);
    const result = await this.forward(endpoint, call, METHOD.toolsList, call.params);
    return withGatewayMeta(result, this.deps.serverInfo);
  }

  private async callTool(call: McpCall, params: CallToolParams): Promise<Result> {
    const endpoint = this.route(call.project);
    const capabilities = call.params._meta[META.clientCapabilities];
    const protocolVersion = call.params._meta[META.protocolVersion];
    // MRTR retries stay on the ordinary path: the round trip belongs to the original synchronous call.
    const isRetry = params.inputResponses !== undefined || params.requestState !== undefined;
    if (declaresTasks(capabilities) && !isRetry) {
      const discover = await this.discover_(endpoint);
      const decision = qualifyForTaskPath({
        clientCapabilities: capabilities,
        protocolVersion,
        projectTasksEnabled: call.project.features.tasks,
        upstreamDiscover: discover,
      });
      if (decision.taskPath) return this.startTask(call, params, endpoint);
      this.deps.logger.debug({ project: call.project.slug, reason: decision.reason }, 'ordinary path');
    }
    const result = await this.forward(endpoint, call, METHOD.toolsCall, call.params);
    if (result.resultType === 'task') {
      throw new ProtocolError(
        'InternalError',
        `Upstream "${endpoint.alias}" answered with an unrequested task`,
      );
    }
    return withGatewayMeta(result, this.deps.serverInfo);
  }

  private async startTask(
    call: McpCall,
    params: CallToolParams,
    endpoint: UpstreamEndpoint,
  ): Promise<Result> {
    const taskId = mintTaskId();
    const taskKey = taskKeyOf(taskId);
    const capabilities = call.params._meta[META.clientCapabilities];
    let outcome;
    try {
      outcome = await this.deps.engine.start(
        {
          taskKey,
          project: call.project.slug,
          upstream: endpoint.alias,
          caller: call.caller,
          createdAt: new Date().toISOString(),
          call: {
            tool: params.name,
            ...(params.arguments !== undefined && { arguments: params.arguments }),
            relayedMeta: relayableMeta(call.params._meta),
            protocolVersion: call.params._meta[META.protocolVersion],
            elicitationForm: declaresFormElicitation(capabilities),
            idempotent: false,
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
      case 'task':
        return createTaskResult(taskId, outcome.snapshot, this.deps.serverInfo);
      case 'result':
        return withGatewayMeta(outcome.result, this.deps.serverInfo);
      case 'error':
        throw new RelayedError(
          outcome.error.code,
          outcome.error.message,
          outcome.error.data,
          outcome.httpStatus,
        );
    }
  }

  private async getTask(call: McpCall): Promise<Result> {
    const params = parseParams(GetTaskParamsSchema, call.params);
    const task = await this.ownedTask(call, params.taskId);
    return getTaskResult(params.taskId, await this.currentSnapshot(task), this.deps.serverInfo);
  }

  private async updateTask(call: McpCall): Promise<Result> {
    const params = parseParams(UpdateTaskParamsSchema, call.params);
    const task = await this.ownedTask(call, params.taskId);
    if (!TERMINAL_TASK_STATUSES.has(task.snapshot.status)) {
      await this.signal(() => this.deps.engine.provideInput(task.workflowId, params.inputResponses));
    }
    return withGatewayMeta({ resultType: 'complete' }, this.deps.serverInfo);
  }

  private async cancelTask(call: McpCall): Promise<Result> {
    const params = parseParams(CancelTaskParamsSchema, call.params);
    const task = await this.ownedTask(call, params.taskId);
    if (!TERMINAL_TASK_STATUSES.has(task.snapshot.status)) {
      await this.signal(() => this.deps.engine.cancel(task.workflowId));
    }
    return withGatewayMeta({ resultType: 'complete' }, this.deps.serverInfo);
  }

  /**
   * The task if it belongs to this project and caller. Anything else (unknown id, another project,
   * another caller) gets the same answer, so a foreign task is indistinguishable from a missing one.
   */
  private async ownedTask(call: McpCall, taskId: string): Promise<TaskRecord> {
    if (!declaresTasks(call.params._meta[META.clientCapabilities])) {
      throw new ProtocolError(
        'MissingRequiredClientCapability',
        'This request requires the Tasks extension',
        {
          requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
        },
      );
    }
    const task = await this.deps.store.getTask(taskKeyOf(taskId));
    const owned =
      task !== undefined &&
      task.project === call.project.slug &&
      task.caller.kind === call.caller.kind &&
      task.caller.id === call.caller.id &&
      task.workflowId === taskWorkflowId(task.taskKey);
    if (!owned) throw new ProtocolError('InvalidParams', 'Failed to retrieve task: Task not found');
    return task;
  }

  /** The live workflow's view when it is running; the stored snapshot once terminal or if it is slow. */
  private async currentSnapshot(task: TaskRecord): Promise<TaskSnapshot> {
    if (TERMINAL_TASK_STATUSES.has(task.snapshot.status)) return task.snapshot;
    try {
      const live = await this.deps.engine.snapshot(
        task.workflowId,
        this.deps.snapshotQueryTimeoutMs ?? 5_000,
      );
      return live ?? task.snapshot;
    } catch (err) {
      this.deps.logger.warn({ err: errorName(err) }, 'snapshot query failed; answering from the store');
      return task.snapshot;
    }
  }

  private async signal(send: () => Promise<void>): Promise<void> {
    try {
      await send();
    } catch (err) {
      this.deps.logger.error({ err: errorName(err) }, 'task signal failed');
      throw new ProtocolError('TaskEngineUnavailable', 'The gateway could not record the request; try again');
    }
  }

  private route(project: ProjectConfig): UpstreamEndpoint {
    const upstream = project.upstreams[0];
    if (!upstream) throw new ProtocolError('InternalError', `Project "${project.slug}" has no upstream`);
    return toEndpoint(upstream);
  }

  private async discover_(endpoint: UpstreamEndpoint) {
    try {
      return await this.deps.discovery.get(endpoint);
    } catch (err) {
      throw upstreamUnavailable(endpoint, err);
    }
  }

  /** Ordinary path: relays the request with the client's capabilities minus Tasks. */
  private async forward(endpoint: UpstreamEndpoint, call: McpCall, method: string, params: Result) {
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
        call.signal ? { signal: call.signal } : {},
      );
    } catch (err) {
      throw upstreamUnavailable(endpoint, err);
    }
    if (reply.kind === 'error') {
      throw new RelayedError(reply.error.code, reply.error.message, reply.error.data);
    }
    return reply.result;
  }
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
