/**
 * The 2025-era protocol (2025-03-26, 2025-06-18, 2025-11-25) as far as the gateway reads or writes it:
 * the `initialize` handshake, the era's capability shapes, and the 2025-11-25 experimental tasks. Both
 * interop adapters use these (src/api/mcp/legacy for clients, src/upstream/legacy for upstreams); nothing
 * else in the gateway speaks this era.
 *
 * Client SDKs validate some results strictly (the empty result of `ping` and `logging/setLevel`, the
 * task shape), so these schemas follow the 2025-11-25 schema.ts exactly where the gateway writes them.
 */
import { z } from 'zod';
import { TASK_STATUSES } from './constants';
import { ImplementationSchema, MetaSchema } from './core';

/** The legacy versions the gateway serves and speaks, newest first. */
export const LEGACY_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;
export type LegacyProtocolVersion = (typeof LEGACY_PROTOCOL_VERSIONS)[number];

export function isLegacyVersion(v: unknown): v is LegacyProtocolVersion {
  return (LEGACY_PROTOCOL_VERSIONS as readonly unknown[]).includes(v);
}

/** The version from which sessionless requests must carry `MCP-Protocol-Version`. */
export const VERSION_HEADER_SINCE = '2025-06-18';
/** The version that introduced the experimental tasks. */
export const LEGACY_TASKS_SINCE = '2025-11-25';

export const LEGACY_METHOD = {
  initialize: 'initialize',
  initialized: 'notifications/initialized',
  ping: 'ping',
  setLevel: 'logging/setLevel',
  tasksResult: 'tasks/result',
  tasksList: 'tasks/list',
  taskStatus: 'notifications/tasks/status',
} as const;

/** `_meta` key tying a 2025 message to a task. */
export const RELATED_TASK_META = 'io.modelcontextprotocol/related-task';

/** 2025 client capabilities: the era's own keys; `tasks` only in 2025-11-25. */
export const LegacyClientCapabilitiesSchema = z.looseObject({
  experimental: z.record(z.string(), z.unknown()).optional(),
  roots: z.looseObject({ listChanged: z.boolean().optional() }).optional(),
  sampling: z.looseObject({}).optional(),
  /** 2025-06-18: `{}` (form only); 2025-11-25: `{ form?, url? }`, `{}` meaning form. */
  elicitation: z
    .looseObject({ form: z.looseObject({}).optional(), url: z.looseObject({}).optional() })
    .optional(),
  tasks: z.looseObject({}).optional(),
});
export type LegacyClientCapabilities = z.infer<typeof LegacyClientCapabilitiesSchema>;

export const InitializeParamsSchema = z.looseObject({
  protocolVersion: z.string(),
  capabilities: LegacyClientCapabilitiesSchema,
  clientInfo: ImplementationSchema,
  _meta: MetaSchema.optional(),
});
export type InitializeParams = z.infer<typeof InitializeParamsSchema>;

export const LegacyServerCapabilitiesSchema = z.looseObject({
  experimental: z.record(z.string(), z.unknown()).optional(),
  logging: z.looseObject({}).optional(),
  completions: z.looseObject({}).optional(),
  prompts: z.looseObject({ listChanged: z.boolean().optional() }).optional(),
  resources: z
    .looseObject({ subscribe: z.boolean().optional(), listChanged: z.boolean().optional() })
    .optional(),
  tools: z.looseObject({ listChanged: z.boolean().optional() }).optional(),
  tasks: z
    .looseObject({
      list: z.looseObject({}).optional(),
      cancel: z.looseObject({}).optional(),
      requests: z
        .looseObject({ tools: z.looseObject({ call: z.looseObject({}).optional() }).optional() })
        .optional(),
    })
    .optional(),
});
export type LegacyServerCapabilities = z.infer<typeof LegacyServerCapabilitiesSchema>;

export const InitializeResultSchema = z.looseObject({
  protocolVersion: z.string(),
  capabilities: LegacyServerCapabilitiesSchema,
  serverInfo: ImplementationSchema,
  instructions: z.string().optional(),
  _meta: MetaSchema.optional(),
});
export type InitializeResult = z.infer<typeof InitializeResultSchema>;

/** `params.task` on a task-augmented 2025-11-25 request. */
export const TaskMetadataSchema = z.looseObject({ ttl: z.number().int().nonnegative().optional() });

/** A 2025-11-25 task: `ttl` is required (null = unlimited), intervals in milliseconds. */
export const LegacyTaskSchema = z.looseObject({
  taskId: z.string().min(1),
  status: z.enum(TASK_STATUSES),
  statusMessage: z.string().optional(),
  createdAt: z.string(),
  lastUpdatedAt: z.string(),
  ttl: z.number().int().nonnegative().nullable(),
  pollInterval: z.number().int().nonnegative().optional(),
});
export type LegacyTask = z.infer<typeof LegacyTaskSchema>;

export const LegacyCreateTaskResultSchema = z.looseObject({
  task: LegacyTaskSchema,
  _meta: MetaSchema.optional(),
});

/** How a 2025-11-25 tool runs with tasks; absent means `forbidden`. */
export const TaskSupportSchema = z.enum(['forbidden', 'optional', 'required']);
export type TaskSupport = z.infer<typeof TaskSupportSchema>;

/** A tool's `execution.taskSupport`, `forbidden` when absent or malformed. */
export function taskSupportOf(tool: Record<string, unknown>): TaskSupport {
  const execution = tool.execution as { taskSupport?: unknown } | undefined;
  const parsed = TaskSupportSchema.safeParse(execution?.taskSupport);
  return parsed.success ? parsed.data : 'forbidden';
}

/** Logging levels of `logging/setLevel` (RFC 5424 names). */
export const LogLevelSchema = z.enum([
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
]);

/**
 * What a probe found out about an upstream (src/upstream/eras/switch.ts): the era it speaks (`modern` =
 * 2026-07-28, `legacy` = a 2025 version; null = none the gateway speaks, or it could not be reached),
 * the version, when it was probed, and why the probe failed. Stored with the upstream (migration 0008).
 */
export interface UpstreamProbe {
  era: 'modern' | 'legacy' | null;
  protocolVersion: string | null;
  probedAt: string;
  error: string | null;
}

/**
 * What anyone but the instance administrator hears of a failed probe, whatever failed (nothing listens,
 * something that is not MCP answered, it wants a credential): one message, so a probe cannot tell an open
 * port from a closed one. The detail goes to the gateway's log and the administrator's view.
 */
export const PROBE_FAILED =
  "The upstream is unreachable, or did not answer as an MCP server the gateway speaks (the gateway's log has the detail)";

/**
 * A 2025-era upstream session as the gateway keeps it, shared by its replicas and workers through the
 * store: the upstream's `Mcp-Session-Id` (null for a stateless upstream), the negotiated version and
 * the `initialize` result the synthesized `server/discover` is made from. `nonce` names this session
 * among the ones the same scope had, so a task knows whether its session is still the current one.
 */
export interface LegacySessionRecord {
  nonce: string;
  url: string;
  upstreamId: string | null;
  protocolVersion: string;
  sessionId: string | null;
  initialize: InitializeResult;
}
