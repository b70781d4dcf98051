/**
 * Shared building blocks of the example upstream's tools: the tool context, capability checks, argument
 * parsing and result helpers. tools.ts (the tasks fixtures) and fixtures/*.ts (the "everything server"
 * fixtures of the conformance suite) both build on these.
 */
import type { z } from 'zod';
import type {
  CallToolParams,
  CallToolResult,
  ClientCapabilities,
  CreateTaskResult,
  InputRequests,
  InputRequiredResult,
  Tool,
} from '../../src/protocol';
import { ProtocolError, TASKS_EXTENSION } from '../../src/protocol';
import type { InputCollector } from './mrtr';
import type { TaskStore } from './task-store';

export type ToolOutcome = CallToolResult | InputRequiredResult | CreateTaskResult;

/** Sends a notification on the request's own response stream (SSE); a no-op when it cannot. */
export type Notify = (method: string, params: Record<string, unknown>) => void;

export interface ToolContext {
  params: CallToolParams;
  capabilities: ClientCapabilities;
  store: TaskStore;
  collector: InputCollector;
  /** How long `failing_job`, `protocol_error_job` and `test_tool_with_task` run as tasks. */
  jobDurationMs: number;
  /** Waits `ms`; rejects when the client disconnects or the server closes. */
  sleep(ms: number): Promise<void>;
  /** Request-scoped notifications (`notifications/progress`, `notifications/message`). */
  notify: Notify;
  /** Fires `notifications/tools/list_changed` or `…/prompts/list_changed` on open listen streams. */
  listChanged(kind: 'tools' | 'prompts'): void;
  /** Fires `notifications/resources/updated` on the listen streams subscribed to `uri`. */
  resourceUpdated(uri: string): void;
}

export interface ExampleTool {
  definition: Tool;
  run(ctx: ToolContext): ToolOutcome | Promise<ToolOutcome>;
}

export const TASK_REQUIRED = { extensions: { [TASKS_EXTENSION]: {} } };

export function declaresTasks(capabilities: ClientCapabilities): boolean {
  return capabilities.extensions?.[TASKS_EXTENSION] !== undefined;
}

/** `elicitation: {}` means form only (spec); `{url: {}}` alone excludes form. */
/** Refuses (-32021, naming the Tasks extension) a call of a tool that runs only as a task from a client without it. */
export function requireTasks(ctx: ToolContext): void {
  if (!declaresTasks(ctx.capabilities)) {
    throw new ProtocolError(
      'MissingRequiredClientCapability',
      `Tool ${ctx.params.name} runs only as a task; declare ${TASKS_EXTENSION}`,
      { requiredCapabilities: TASK_REQUIRED },
    );
  }
}

export function declaresFormElicitation(capabilities: ClientCapabilities): boolean {
  const elicitation = capabilities.elicitation;
  if (elicitation === undefined) return false;
  return elicitation.form !== undefined || elicitation.url === undefined;
}

/** The client capability an MRTR input request needs, in `requiredCapabilities` form. */
const CAPABILITY_FOR_METHOD: Record<string, { key: string; value: Record<string, unknown> }> = {
  'elicitation/create': { key: 'elicitation', value: { form: {} } },
  'sampling/createMessage': { key: 'sampling', value: {} },
  'roots/list': { key: 'roots', value: {} },
};

/** Whether the request declared what `method` needs (form elicitation, sampling or roots). */
export function declaresInputMethod(capabilities: ClientCapabilities, method: string): boolean {
  if (method === 'elicitation/create') return declaresFormElicitation(capabilities);
  const needed = CAPABILITY_FOR_METHOD[method];
  return needed === undefined || (capabilities as Record<string, unknown>)[needed.key] !== undefined;
}

/**
 * A server never puts a request type in `inputRequests` that the client did not declare on this request:
 * -32021 naming every capability the requests need and the client lacks.
 */
export function requireInputCapabilities(
  what: string,
  capabilities: ClientCapabilities,
  requests: InputRequests,
): void {
  const missing: Record<string, unknown> = {};
  for (const request of Object.values(requests)) {
    const needed = CAPABILITY_FOR_METHOD[request.method];
    if (needed && !declaresInputMethod(capabilities, request.method)) missing[needed.key] = needed.value;
  }
  if (Object.keys(missing).length > 0) {
    throw new ProtocolError(
      'MissingRequiredClientCapability',
      `${what} asks for input the client did not declare: ${Object.keys(missing).join(', ')}`,
      { requiredCapabilities: missing },
    );
  }
}

export function parseArgs<T>(schema: z.ZodType<T>, ctx: ToolContext): T {
  const parsed = schema.safeParse(ctx.params.arguments ?? {});
  if (!parsed.success) {
    throw new ProtocolError('InvalidParams', `Invalid arguments for ${ctx.params.name}`, {
      issues: parsed.error.issues.map((issue) => ({ path: issue.path.map(String), message: issue.message })),
    });
  }
  return parsed.data;
}

export function textResult(text: string, extra: { isError?: boolean; structuredContent?: unknown } = {}) {
  return { resultType: 'complete' as const, content: [{ type: 'text', text }], ...extra };
}

export function formRequest(
  message: string,
  properties: Record<string, unknown>,
  required: string[],
): InputRequests[string] {
  return {
    method: 'elicitation/create',
    params: { mode: 'form', message, requestedSchema: { type: 'object', properties, required } },
  };
}

/** The `content.name` of an accepted form answer, if any. */
export function answeredField(
  answer: Record<string, unknown> | undefined,
  field: string,
): string | undefined {
  if (answer?.action !== 'accept') return undefined;
  const content = answer.content;
  if (typeof content !== 'object' || content === null) return undefined;
  const value = (content as Record<string, unknown>)[field];
  return typeof value === 'string' ? value : undefined;
}

export const NO_ARGS = { type: 'object', properties: {} } as const;

/** A tool without arguments whose every call completes with the same `content`. */
export function fixedContentTool(
  name: string,
  description: string,
  content: CallToolResult['content'],
): ExampleTool {
  return {
    definition: { name, description, inputSchema: NO_ARGS },
    run: () => ({ resultType: 'complete', content }),
  };
}
