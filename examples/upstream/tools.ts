/**
 * The tools of the example upstream. Names, arguments and behaviour follow the tasks-* scenarios of
 * `@modelcontextprotocol/conformance@0.2.0-alpha.12`, so the suite can run through the gateway against it.
 *
 * | tool                  | tasks declared on the request                  | not declared                       |
 * | --------------------- | ---------------------------------------------- | ---------------------------------- |
 * | `greet`               | sync `Hello, {name}!`                          | same                               |
 * | `slow_compute`        | task, completes after `seconds`                | sync, answers after `seconds`      |
 * | `failing_job`         | task, completes with `isError: true`           | -32021 (task required)             |
 * | `protocol_error_job`  | task, ends `failed` with a JSON-RPC error      | sync -32603                        |
 * | `confirm_delete`      | task, `input_required` (one form elicitation)  | MRTR `input_required`, then sync   |
 * | `multi_input`         | task, two input keys outstanding at once       | MRTR `input_required`, then sync   |
 * | `test_tool_with_task` | MRTR round for `user_name`, then a task        | -32021 (task required)             |
 *
 * Tools that ask for input also need form elicitation declared on the request (a server never puts a
 * request type in `inputRequests` that the client did not declare), else -32021 naming `elicitation`.
 *
 * After these come the conformance suite's "everything server" fixtures (fixtures/content-tools.ts,
 * fixtures/mrtr-tools.ts, fixtures/subscriptions.ts), served unless `conformanceFixtures: false`.
 */
import { z } from 'zod';
import type { CallToolResult, CreateTaskResult, InputRequests, InputResponses } from '../../src/protocol';
import { ProtocolError } from '../../src/protocol';
import { CONTENT_TOOLS } from './fixtures/content-tools';
import { GATEWAY_TOOLS } from './fixtures/gateway-tools';
import { LEGACY_ERA_TOOLS } from './fixtures/legacy-era-tools';
import { TASK_EDGE_TOOLS } from './fixtures/task-edge-tools';
import { MRTR_TOOLS } from './fixtures/mrtr-tools';
import { SCHEMA_TOOLS } from './fixtures/schema-tools';
import { SUBSCRIPTION_TOOLS } from './fixtures/subscriptions';
import type { ExampleTool, ToolContext } from './kit';
import {
  answeredField,
  declaresFormElicitation,
  declaresTasks,
  formRequest,
  parseArgs,
  requireTasks,
  textResult,
} from './kit';
import type { TaskRecord } from './task-store';

export type { ExampleTool, ToolContext, ToolOutcome } from './kit';
export { declaresTasks } from './kit';

// `name` is optional so that generic probes (the suite's header checks call the first listed tool with
// no arguments) still get a result.
const GreetArgs = z.object({ name: z.string().default('World') });
const SlowComputeArgs = z.object({
  seconds: z.number().min(0).max(3600),
  label: z.string().optional(),
  progress: z.boolean().optional(),
  pollIntervalMs: z.int().min(100).max(60_000).optional(),
});
const ConfirmDeleteArgs = z.object({ filename: z.string().min(1) });

const FORM_ELICITATION_REQUIRED = { elicitation: { form: {} } };

function requireFormElicitation(ctx: ToolContext): void {
  if (!declaresFormElicitation(ctx.capabilities)) {
    throw new ProtocolError(
      'MissingRequiredClientCapability',
      `Tool ${ctx.params.name} asks for input; declare form elicitation`,
      { requiredCapabilities: FORM_ELICITATION_REQUIRED },
    );
  }
}

/** The flat CreateTaskResult: `Result & Task`, no `task` wrapper, no result/error/inputRequests. */
export function createTaskResult(task: TaskRecord): CreateTaskResult {
  return {
    ...task.extra,
    resultType: 'task',
    taskId: task.taskId,
    status: task.status,
    ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: task.advertisedTtlMs ?? task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
  };
}

function slowComputeText(label: string, seconds: number): string {
  return `Computed ${label} in ${seconds}s`;
}

const greet: ExampleTool = {
  definition: {
    name: 'greet',
    description: 'Synchronous greeting; never runs as a task.',
    inputSchema: { type: 'object', properties: { name: { type: 'string', default: 'World' } } },
  },
  run(ctx) {
    const { name } = parseArgs(GreetArgs, ctx);
    return textResult(`Hello, ${name}!`);
  },
};

const slowCompute: ExampleTool = {
  definition: {
    name: 'slow_compute',
    description:
      'Sleeps `seconds` then returns. A task when the request declares the tasks extension (cancellable), ' +
      'otherwise answered synchronously.',
    inputSchema: {
      type: 'object',
      properties: {
        seconds: { type: 'number', minimum: 0, maximum: 3600 },
        label: { type: 'string' },
        progress: { type: 'boolean', description: 'A task says when it is halfway (a new status message)' },
        pollIntervalMs: {
          type: 'integer',
          minimum: 100,
          maximum: 60_000,
          description: "The poll interval this task suggests (default: the server's)",
        },
      },
      required: ['seconds'],
    },
  },
  async run(ctx) {
    const {
      seconds,
      label = 'slow_compute',
      progress = false,
      pollIntervalMs,
    } = parseArgs(SlowComputeArgs, ctx);
    const result = textResult(slowComputeText(label, seconds), { structuredContent: { label, seconds } });
    if (!declaresTasks(ctx.capabilities)) {
      await ctx.sleep(seconds * 1000);
      return result;
    }
    // Always a task when the client can take one, even for `seconds: 0`: the fixture allows either, and
    // a predictable shape is easier to test through the gateway.
    const task = ctx.store.create('slow_compute');
    task.statusMessage = `Computing ${label}`;
    if (pollIntervalMs !== undefined) task.pollIntervalMs = pollIntervalMs;
    if (progress)
      ctx.store.schedule(task, seconds * 500, () => ctx.store.say(task, `Halfway through ${label}`));
    ctx.store.schedule(task, seconds * 1000, () => ctx.store.complete(task, result));
    return createTaskResult(task);
  },
};

const failingJob: ExampleTool = {
  definition: {
    name: 'failing_job',
    description: 'Task-required: runs about a second, then completes with a tool error (isError: true).',
    inputSchema: { type: 'object', properties: {} },
  },
  run(ctx) {
    requireTasks(ctx);
    const task = ctx.store.create('failing_job');
    ctx.store.schedule(task, ctx.jobDurationMs, () =>
      // A tool that ran and reported an error is `completed` with isError, never `failed` (spec).
      ctx.store.complete(task, textResult('Tool execution failed: simulated job error', { isError: true })),
    );
    return createTaskResult(task);
  },
};

const protocolErrorJob: ExampleTool = {
  definition: {
    name: 'protocol_error_job',
    description: 'As a task: ends `failed` with a JSON-RPC error. Synchronously: a -32603 error.',
    inputSchema: { type: 'object', properties: {} },
  },
  run(ctx) {
    const message = 'Internal error: simulated protocol failure';
    if (!declaresTasks(ctx.capabilities)) throw new ProtocolError('InternalError', message);
    const task = ctx.store.create('protocol_error_job');
    ctx.store.schedule(task, ctx.jobDurationMs, () =>
      ctx.store.fail(task, { code: -32603, message }, 'Tool execution failed: simulated protocol failure'),
    );
    return createTaskResult(task);
  },
};

const CONFIRM_KEY = 'confirm';

function confirmRequest(filename: string): InputRequests {
  return {
    [CONFIRM_KEY]: formRequest(
      `Delete ${filename}?`,
      { confirm: { type: 'boolean', title: 'Confirm', description: `Delete ${filename}` } },
      ['confirm'],
    ),
  };
}

function confirmResult(filename: string, answers: InputResponses) {
  const answer = answers[CONFIRM_KEY];
  const content = answer?.content;
  const confirmed =
    answer?.action === 'accept' &&
    typeof content === 'object' &&
    content !== null &&
    (content as Record<string, unknown>).confirm === true;
  const text = confirmed ? `Confirmed: deleted ${filename}` : `Declined: kept ${filename}`;
  return textResult(text, { structuredContent: { filename, confirmed } });
}

const confirmDelete: ExampleTool = {
  definition: {
    name: 'confirm_delete',
    description: 'Asks for confirmation (one form elicitation), then reports whether the file was deleted.',
    inputSchema: { type: 'object', properties: { filename: { type: 'string' } }, required: ['filename'] },
    annotations: { destructiveHint: true },
  },
  run(ctx) {
    const { filename } = parseArgs(ConfirmDeleteArgs, ctx);
    requireFormElicitation(ctx);
    const requests = confirmRequest(filename);
    if (!declaresTasks(ctx.capabilities)) {
      const outcome = ctx.collector.collect(ctx.params, requests);
      return outcome.done ? confirmResult(filename, outcome.answers) : outcome.result;
    }
    return startInputTask(ctx, requests, 'Waiting for delete confirmation', (answers) =>
      confirmResult(filename, answers),
    );
  },
};

const MULTI_KEYS = ['first', 'second'] as const;

function multiRequests(): InputRequests {
  return Object.fromEntries(
    MULTI_KEYS.map((key) => [key, formRequest(`${key} value?`, { name: { type: 'string' } }, ['name'])]),
  );
}

function multiResult(answers: InputResponses) {
  const values = MULTI_KEYS.map((key) => answeredName(answers[key]) ?? `(no ${key} value)`);
  return textResult(`Got ${values[0]} and ${values[1]}`, { structuredContent: { values } });
}

const multiInput: ExampleTool = {
  definition: {
    name: 'multi_input',
    description: 'Asks two questions at once (keys `first`, `second`); answers may come one at a time.',
    inputSchema: { type: 'object', properties: {} },
  },
  run(ctx) {
    requireFormElicitation(ctx);
    const requests = multiRequests();
    if (!declaresTasks(ctx.capabilities)) {
      const outcome = ctx.collector.collect(ctx.params, requests);
      return outcome.done ? multiResult(outcome.answers) : outcome.result;
    }
    return startInputTask(ctx, requests, 'Waiting for two answers', multiResult);
  },
};

const USER_NAME_KEY = 'user_name';

const toolWithTask: ExampleTool = {
  definition: {
    name: 'test_tool_with_task',
    description:
      'Task-required. Round 1 asks for `user_name` (MRTR); the retry becomes a task greeting them.',
    inputSchema: { type: 'object', properties: {} },
  },
  run(ctx) {
    requireTasks(ctx);
    requireFormElicitation(ctx);
    // MRTR rounds finish synchronously before the task exists (spec SHOULD), so round 1 has no taskId.
    const outcome = ctx.collector.collect(ctx.params, {
      [USER_NAME_KEY]: formRequest('What is your name?', { name: { type: 'string' } }, ['name']),
    });
    if (!outcome.done) return outcome.result;
    const name = answeredName(outcome.answers[USER_NAME_KEY]) ?? 'stranger';
    const task = ctx.store.create('test_tool_with_task');
    ctx.store.schedule(task, ctx.jobDurationMs, () =>
      ctx.store.complete(task, textResult(`Hello, ${name}! Your task is complete.`)),
    );
    return createTaskResult(task);
  },
};

/**
 * Creates a task that parks in `input_required` right after creation and completes as soon as every
 * key is answered. The CreateTaskResult says `working`: the input requests show up on `tasks/get`
 * (never on the CreateTaskResult itself).
 */
function startInputTask(
  ctx: ToolContext,
  requests: InputRequests,
  statusMessage: string,
  finish: (answers: InputResponses) => CallToolResult,
): CreateTaskResult {
  const { store } = ctx;
  const task = store.create(ctx.params.name);
  store.schedule(task, 0, () =>
    store.requestInput(task, requests, statusMessage, (answers) => store.complete(task, finish(answers))),
  );
  return createTaskResult(task);
}

function answeredName(answer: InputResponses[string] | undefined): string | undefined {
  return answeredField(answer, 'name');
}

/** The first TASK_TOOL_COUNT entries of TOOLS are the tasks fixtures (listed first: probes call tools[0]). */
export const TASK_TOOL_COUNT = 7;

export const TOOLS: readonly ExampleTool[] = [
  greet,
  slowCompute,
  failingJob,
  protocolErrorJob,
  confirmDelete,
  multiInput,
  toolWithTask,
  ...CONTENT_TOOLS,
  ...MRTR_TOOLS,
  ...SUBSCRIPTION_TOOLS,
  ...SCHEMA_TOOLS,
  ...GATEWAY_TOOLS,
  ...TASK_EDGE_TOOLS,
  ...LEGACY_ERA_TOOLS,
];

const BY_NAME = new Map(TOOLS.map((tool, index) => [tool.definition.name, { tool, index }]));

/** The tool called `name`; the conformance fixtures only when `withFixtures`. */
export function findTool(name: string, withFixtures = true): ExampleTool | undefined {
  const entry = BY_NAME.get(name);
  if (!entry || (!withFixtures && entry.index >= TASK_TOOL_COUNT)) return undefined;
  return entry.tool;
}
