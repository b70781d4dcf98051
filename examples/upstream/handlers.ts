/**
 * Method handlers of the example upstream: `server/discover`, `tools/*`, the Tasks extension's
 * `tasks/get|update|cancel` and, with the conformance fixtures on, `resources/*`, `prompts/*` and
 * `completion/complete`. They return result bodies without `_meta`; the server adds `serverInfo`.
 * `subscriptions/listen` is a stream, so server.ts answers it itself.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ZodType } from 'zod';
import type { ClientCapabilities, RequestMeta } from '../../src/protocol';
import {
  CallToolParamsSchema,
  CancelTaskParamsSchema,
  GetTaskParamsSchema,
  ListToolsParamsSchema,
  META,
  METHOD,
  PROTOCOL_VERSION,
  ProtocolError,
  TASKS_EXTENSION,
  UpdateTaskParamsSchema,
} from '../../src/protocol';
import { checkParamHeaders } from './envelope';
import { complete } from './fixtures/completion';
import { getPrompt, listPrompts } from './fixtures/prompts';
import { listResourceTemplates, listResources, readResource } from './fixtures/resources';
import type { ListKind } from './fixtures/subscriptions';
import type { Notify } from './kit';
import type { InputCollector } from './mrtr';
import type { TaskRecord, TaskStore } from './task-store';
import type { ToolOutcome } from './tools';
import { TASK_TOOL_COUNT, TOOLS, declaresTasks, findTool, createTaskResult } from './tools';

export type ResultBody = Record<string, unknown> & { resultType: string };

export interface HandlerConfig {
  advertiseTasks: boolean;
  /** Serve the conformance suite's "everything server" fixtures besides the tasks tools. */
  conformanceFixtures: boolean;
  discoverTtlMs: number;
  jobDurationMs: number;
  /** Tools added while running (`ExampleUpstream.addTool`), listed after the fixed ones; never callable. */
  addedTools: Record<string, unknown>[];
}

export interface HandlerStats {
  toolCalls: Record<string, number>;
  tasksGet: number;
  tasksUpdate: number;
  tasksCancel: number;
  taskIds: string[];
  calls: ToolCallRecord[];
}

/** One `tools/call` that reached a tool: its name, arguments and the task it created, if any. */
export interface ToolCallRecord {
  tool: string;
  arguments: Record<string, unknown>;
  taskId?: string;
}

export interface HandlerContext {
  config: HandlerConfig;
  stats: HandlerStats;
  store: TaskStore;
  collector: InputCollector;
  sleep(ms: number): Promise<void>;
  notify: Notify;
  listChanged(kind: ListKind): void;
  resourceUpdated(uri: string): void;
  /** The request's HTTP headers (for `Mcp-Param-*` validation). */
  headers: IncomingHttpHeaders;
}

export const FIXTURE_METHOD = {
  resourcesList: 'resources/list',
  resourcesTemplatesList: 'resources/templates/list',
  resourcesRead: 'resources/read',
  promptsList: 'prompts/list',
  promptsGet: 'prompts/get',
  complete: 'completion/complete',
  subscriptionsListen: 'subscriptions/listen',
} as const;

const TASK_METHODS: ReadonlySet<string> = new Set(Object.values(METHOD));
const ALL_METHODS: ReadonlySet<string> = new Set([...TASK_METHODS, ...Object.values(FIXTURE_METHOD)]);

/**
 * Methods served; anything else is -32601 (including the legacy `tasks/list` and `tasks/result`, and the
 * removed `initialize`, `ping`, `logging/setLevel`, `resources/subscribe|unsubscribe`).
 */
export function knownMethods(config: Pick<HandlerConfig, 'conformanceFixtures'>): ReadonlySet<string> {
  return config.conformanceFixtures ? ALL_METHODS : TASK_METHODS;
}

/** The tools listed and callable: the tasks fixtures, plus the conformance fixtures when on. */
export function toolsFor(config: Pick<HandlerConfig, 'conformanceFixtures'>) {
  return config.conformanceFixtures ? TOOLS : TOOLS.slice(0, TASK_TOOL_COUNT);
}

export async function handle(
  ctx: HandlerContext,
  method: string,
  params: Record<string, unknown>,
  meta: RequestMeta,
): Promise<ResultBody> {
  const capabilities = meta[META.clientCapabilities];
  switch (method) {
    case METHOD.discover:
      return discover(ctx.config);
    case METHOD.toolsList:
      parse(ListToolsParamsSchema, params);
      // One page: the list is short and fixed, so `cursor` is accepted and ignored.
      return {
        resultType: 'complete',
        tools: [...toolsFor(ctx.config).map((tool) => tool.definition), ...ctx.config.addedTools],
        ttlMs: ctx.config.discoverTtlMs,
        cacheScope: 'public',
      };
    case METHOD.toolsCall:
      return callTool(ctx, params, capabilities);
    case METHOD.tasksGet:
      ctx.stats.tasksGet++;
      return getTask(ctx, params, capabilities);
    case METHOD.tasksUpdate: {
      ctx.stats.tasksUpdate++;
      requireTasksCapability(capabilities);
      const { taskId, inputResponses } = parse(UpdateTaskParamsSchema, params);
      ctx.store.answer(lookup(ctx.store, taskId), inputResponses);
      return { resultType: 'complete' };
    }
    case METHOD.tasksCancel: {
      ctx.stats.tasksCancel++;
      requireTasksCapability(capabilities);
      const { taskId } = parse(CancelTaskParamsSchema, params);
      ctx.store.cancel(lookup(ctx.store, taskId));
      return { resultType: 'complete' };
    }
    case FIXTURE_METHOD.resourcesList:
      return withResultType(listResources());
    case FIXTURE_METHOD.resourcesTemplatesList:
      return withResultType(listResourceTemplates());
    case FIXTURE_METHOD.resourcesRead:
      return withResultType(readResource(params));
    case FIXTURE_METHOD.promptsList:
      return withResultType(listPrompts());
    case FIXTURE_METHOD.promptsGet:
      return withResultType(getPrompt(params, capabilities, ctx.collector));
    case FIXTURE_METHOD.complete:
      return withResultType(complete(params));
    default:
      throw new ProtocolError('MethodNotFound', `Method not found: ${method}`);
  }
}

function withResultType(result: Record<string, unknown>): ResultBody {
  return { resultType: 'complete', ...result };
}

function discover(config: HandlerConfig): ResultBody {
  return {
    resultType: 'complete',
    supportedVersions: [PROTOCOL_VERSION],
    capabilities: {
      ...(config.conformanceFixtures
        ? {
            tools: { listChanged: true },
            prompts: { listChanged: true },
            resources: { subscribe: true },
            completions: {},
          }
        : { tools: {} }),
      ...(config.advertiseTasks ? { extensions: { [TASKS_EXTENSION]: {} } } : {}),
    },
    ttlMs: config.discoverTtlMs,
    cacheScope: 'public',
  };
}

async function callTool(
  ctx: HandlerContext,
  params: Record<string, unknown>,
  capabilities: ClientCapabilities,
): Promise<ResultBody> {
  const callParams = parse(CallToolParamsSchema, params);
  const tool = findTool(callParams.name, ctx.config.conformanceFixtures);
  ctx.stats.toolCalls[callParams.name] = (ctx.stats.toolCalls[callParams.name] ?? 0) + 1;
  if (!tool) throw new ProtocolError('InvalidParams', `Unknown tool: ${callParams.name}`);
  checkParamHeaders(tool.definition.inputSchema, callParams.arguments ?? {}, ctx.headers);
  const outcome: ToolOutcome = await tool.run({
    params: callParams,
    capabilities,
    store: ctx.store,
    collector: ctx.collector,
    jobDurationMs: ctx.config.jobDurationMs,
    sleep: ctx.sleep,
    notify: ctx.notify,
    listChanged: ctx.listChanged,
    resourceUpdated: ctx.resourceUpdated,
  });
  const taskId = outcome.resultType === 'task' && 'taskId' in outcome ? outcome.taskId : undefined;
  if (taskId !== undefined) ctx.stats.taskIds.push(taskId);
  ctx.stats.calls.push({
    tool: callParams.name,
    arguments: callParams.arguments ?? {},
    ...(taskId !== undefined && { taskId }),
  });
  return outcome;
}

function getTask(ctx: HandlerContext, params: Record<string, unknown>, capabilities: ClientCapabilities) {
  requireTasksCapability(capabilities);
  const { taskId } = parse(GetTaskParamsSchema, params);
  return detailedTask(lookup(ctx.store, taskId));
}

/** `tasks/get` result: `resultType: "complete"` with the DetailedTask fields inlined. */
export function detailedTask(task: TaskRecord): ResultBody {
  return {
    ...createTaskResult(task),
    resultType: 'complete',
    ...(task.status === 'input_required' ? { inputRequests: Object.fromEntries(task.pending) } : {}),
    ...(task.status === 'completed' && task.result ? { result: task.result } : {}),
    ...(task.status === 'failed' && task.error ? { error: task.error } : {}),
  };
}

/** Non-declaring requests never see the task surface, whatever earlier requests declared. */
function requireTasksCapability(capabilities: ClientCapabilities): void {
  if (!declaresTasks(capabilities)) {
    throw new ProtocolError('MissingRequiredClientCapability', `Declare ${TASKS_EXTENSION} to use tasks/*`, {
      requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
    });
  }
}

/** Unknown and expired ids get the same answer, revealing nothing about other callers' tasks. */
function lookup(store: TaskStore, taskId: string): TaskRecord {
  const task = store.get(taskId);
  if (!task) throw new ProtocolError('InvalidParams', 'Failed to retrieve task: Task not found');
  return task;
}

function parse<T>(schema: ZodType<T>, params: Record<string, unknown>): T {
  const parsed = schema.safeParse(params);
  if (!parsed.success) {
    throw new ProtocolError('InvalidParams', 'Invalid params', {
      issues: parsed.error.issues.map((issue) => ({ path: issue.path.map(String), message: issue.message })),
    });
  }
  return parsed.data;
}
