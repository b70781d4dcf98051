/** The Tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28). */
import { z } from 'zod';
import { TASK_STATUSES } from './constants';
import { InputRequestsSchema, InputResponsesSchema, RequestParamsSchema, ResultSchema } from './core';
import type { InputRequests } from './core';
import { JsonRpcErrorObjectSchema } from './jsonrpc';
import type { JsonRpcErrorObject } from './jsonrpc';

export const TaskStatusSchema = z.enum(TASK_STATUSES);
export type TaskStatus = z.infer<typeof TaskStatusSchema>;

/** Task fields shared by every variant. `ttlMs` is required and nullable (null = unlimited). */
export const TaskFieldsSchema = z.looseObject({
  taskId: z.string().min(1),
  status: TaskStatusSchema,
  statusMessage: z.string().optional(),
  createdAt: z.string(),
  lastUpdatedAt: z.string(),
  ttlMs: z.int().nonnegative().nullable(),
  pollIntervalMs: z.int().nonnegative().optional(),
});
export type TaskFields = z.infer<typeof TaskFieldsSchema>;

/** `tools/call` answered with a task: a flat `Result & Task` with `resultType: "task"`. */
export const CreateTaskResultSchema = ResultSchema.extend(TaskFieldsSchema.shape).extend({
  resultType: z.literal('task'),
});
export type CreateTaskResult = z.infer<typeof CreateTaskResultSchema>;

const WorkingTaskSchema = TaskFieldsSchema.extend({ status: z.literal('working') });
const InputRequiredTaskSchema = TaskFieldsSchema.extend({
  status: z.literal('input_required'),
  inputRequests: InputRequestsSchema,
});
const CompletedTaskSchema = TaskFieldsSchema.extend({
  status: z.literal('completed'),
  result: z.looseObject({}),
});
const FailedTaskSchema = TaskFieldsSchema.extend({
  status: z.literal('failed'),
  error: JsonRpcErrorObjectSchema,
});
const CancelledTaskSchema = TaskFieldsSchema.extend({ status: z.literal('cancelled') });

export const DetailedTaskSchema = z.discriminatedUnion('status', [
  WorkingTaskSchema,
  InputRequiredTaskSchema,
  CompletedTaskSchema,
  FailedTaskSchema,
  CancelledTaskSchema,
]);
export type DetailedTask = z.infer<typeof DetailedTaskSchema>;

/** `tasks/get` result: the DetailedTask fields inlined, `resultType` always "complete". */
export const GetTaskResultSchema = z.intersection(
  ResultSchema.extend({ resultType: z.literal('complete') }),
  DetailedTaskSchema,
);
export type GetTaskResult = z.infer<typeof GetTaskResultSchema>;

export const GetTaskParamsSchema = RequestParamsSchema.extend({ taskId: z.string().min(1) });
export type GetTaskParams = z.infer<typeof GetTaskParamsSchema>;

/**
 * Entries that are not objects are dropped rather than failing the request: unknown or malformed keys
 * SHOULD be ignored, and one bad entry must not sink the answers next to it.
 */
export const UpdateTaskParamsSchema = RequestParamsSchema.extend({
  taskId: z.string().min(1),
  inputResponses: z
    .record(z.string(), z.unknown())
    .transform((r) =>
      InputResponsesSchema.parse(Object.fromEntries(Object.entries(r).filter(([, v]) => isObject(v)))),
    ),
});

function isObject(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
export type UpdateTaskParams = z.infer<typeof UpdateTaskParamsSchema>;

export const CancelTaskParamsSchema = RequestParamsSchema.extend({ taskId: z.string().min(1) });
export type CancelTaskParams = z.infer<typeof CancelTaskParamsSchema>;

/** The empty acknowledgement of `tasks/update` and `tasks/cancel`. */
export const EmptyResultSchema = ResultSchema.extend({ resultType: z.literal('complete') });

/**
 * The gateway's own view of a task: a DetailedTask without its id. The id is added only when a
 * response is written for the client, so the upstream's id can never leak through a snapshot.
 */
export interface TaskSnapshot {
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs?: number;
  inputRequests?: InputRequests;
  result?: Record<string, unknown>;
  error?: JsonRpcErrorObject;
  /** The upstream task's own `_meta` keys (bounded, serverInfo removed), re-published by the gateway. */
  meta?: Record<string, unknown>;
  /** Extension fields of the upstream task (unknown top-level keys, bounded). */
  extensions?: Record<string, unknown>;
}

/**
 * Stands in for the upstream task id wherever the upstream echoed it (status messages, results, `_meta`);
 * the gateway replaces it with its own task id when it writes a response.
 */
export const TASK_ID_PLACEHOLDER = '{{taskrouter:task-id}}';
