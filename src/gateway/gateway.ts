/**
 * The gateway's decisions for one MCP request of a project: which upstream owns it, whether a tools/call
 * takes the durable task path, cache and response limits on ordinary results, and how task follow-ups
 * are checked and answered. Transport-free: the API hands it a validated request and writes what it
 * returns or throws.
 */
import type { DiscoverResult, InputResponses, TaskSnapshot } from '../protocol';
import {
  CallToolParamsSchema,
  CancelTaskParamsSchema,
  GetTaskParamsSchema,
  META,
  METHOD,
  ProtocolError,
  RelayedError,
  TASKS_EXTENSION,
  TERMINAL_TASK_STATUSES,
  UpdateTaskParamsSchema,
} from '../protocol';
import { principalId } from '../store/control-plane-types';
import { snapshotKey } from '../store/snapshot-key';
import type { TaskRecord } from '../store/task-store';
import { taskKeyOf } from '../store/task-store';
import type { UpstreamEndpoint } from '../upstream/client';
import { taskWorkflowId } from '../workflows/messages';
import type { GatewayDeps, McpCall, RequestContext, Result } from './context';
import { errorName, parseParams } from './context';
import { CallResolvers, discoverUpstream } from './forwarding';
import { discover, listPrompts, listResources, listTools, requireCapability } from './listing';
import { complete, getPrompt, readResource } from './prompts-resources';
import { declaresFormElicitation, declaresTasks, upstreamRunsTasks } from './qualification';
import { getTaskResult, withGatewayMeta } from './responses';
import type { Resolve } from './routing';
import { enabledUpstreams, Router } from './routing';
import { callTool } from './tool-call';

export type { GatewayDeps, McpCall } from './context';

export { CACHE_META_KEY } from './ordinary-call';

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
        return callTool(ctx, parseParams(CallToolParamsSchema, call.params));
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

  private async discoverUpstream(endpoint: UpstreamEndpoint): Promise<DiscoverResult> {
    return discoverUpstream(this.deps.discovery, endpoint);
  }
}
