/**
 * Translation between a 2025-era client's messages and the gateway's one internal model (2026-07-28 +
 * Tasks). Pure functions: capabilities in both directions, the per-request envelope a 2025 request
 * lacks, results without the 2026-only members, and 2026 tasks in the 2025-11-25 task shape.
 */
import type {
  ClientCapabilities,
  LegacyClientCapabilities,
  LegacyProtocolVersion,
  LegacyServerCapabilities,
  LegacyTask,
  Meta,
  RequestMeta,
  ServerCapabilities,
} from '../../../protocol';
import { LEGACY_TASKS_SINCE, META, PROTOCOL_VERSION, TASKS_EXTENSION } from '../../../protocol';
import type { LegacySession } from './session';

/** Result members 2026-07-28 added; 2025 clients reject some of them (the SDKs' empty result is strict). */
const MODERN_ONLY = ['resultType', 'ttlMs', 'cacheScope'] as const;

/** `_meta` keys of a 2025 request the gateway keeps (progress tokens, trace context, vendor keys). */
const RESERVED_ENVELOPE = new Set<string>([META.protocolVersion, META.clientCapabilities, META.clientInfo]);

export interface InternalCallOptions {
  /** Declare the Tasks extension (task follow-ups, task-augmented calls). */
  tasks?: boolean;
}

/**
 * The 2026 envelope for a 2025 request: the internal version, the session's capabilities in 2026 form,
 * its client info, and the request's own `_meta` keys (minus any reserved envelope key it tried to set).
 */
export function internalMeta(
  session: LegacySession,
  requestMeta: unknown,
  opts: InternalCallOptions = {},
): RequestMeta {
  const own = Object.fromEntries(
    Object.entries(isObject(requestMeta) ? requestMeta : {}).filter(([k]) => !RESERVED_ENVELOPE.has(k)),
  );
  return {
    ...own,
    [META.protocolVersion]: PROTOCOL_VERSION,
    [META.clientCapabilities]: internalCapabilities(session.capabilities, session.version, opts),
    ...(session.clientInfo && { [META.clientInfo]: session.clientInfo }),
    // A 2025 session gets log messages without asking per request (`logging/setLevel` is the era's way).
    [META.logLevel]: own[META.logLevel] ?? 'info',
  };
}

/** A 2025 client's capabilities as 2026 capabilities. Only 2025-11-25 knows elicitation modes. */
export function internalCapabilities(
  c: LegacyClientCapabilities,
  version: LegacyProtocolVersion,
  opts: InternalCallOptions = {},
): ClientCapabilities {
  const elicitation =
    c.elicitation === undefined
      ? undefined
      : version === LEGACY_TASKS_SINCE
        ? {
            ...(c.elicitation.form !== undefined || c.elicitation.url === undefined ? { form: {} } : {}),
            ...(c.elicitation.url !== undefined && { url: {} }),
          }
        : { form: {} };
  return {
    ...(c.experimental && { experimental: c.experimental }),
    ...(c.roots && { roots: c.roots }),
    ...(c.sampling && { sampling: c.sampling }),
    ...(elicitation && { elicitation }),
    ...(opts.tasks && { extensions: { [TASKS_EXTENSION]: {} } }),
  };
}

/** Whether the session may use 2025-11-25 tasks (the era has them and the client declared them). */
export function sessionTakesTasks(session: LegacySession): boolean {
  return session.version === LEGACY_TASKS_SINCE && session.capabilities.tasks !== undefined;
}

/** The project's capabilities in the era's shape (`initialize` result). */
export function legacyServerCapabilities(
  c: ServerCapabilities,
  version: LegacyProtocolVersion,
): LegacyServerCapabilities {
  const tasks = version === LEGACY_TASKS_SINCE && c.extensions?.[TASKS_EXTENSION] !== undefined;
  return {
    tools: {},
    logging: {},
    ...(c.prompts && { prompts: {} }),
    ...(c.resources && { resources: {} }),
    ...(c.completions && { completions: {} }),
    ...(tasks && { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }),
  };
}

/** A result as a 2025 client expects it: the 2026-only members removed, everything else kept. */
export function legacyResult(result: Record<string, unknown>): Record<string, unknown> {
  const out = { ...result };
  for (const key of MODERN_ONLY) delete out[key];
  return out;
}

/** A 2026 task (CreateTaskResult or tasks/get result) in the 2025-11-25 shape. */
export function legacyTask(task: Record<string, unknown>): LegacyTask {
  return {
    taskId: String(task.taskId),
    status: task.status as LegacyTask['status'],
    ...(typeof task.statusMessage === 'string' && { statusMessage: task.statusMessage }),
    createdAt: String(task.createdAt),
    lastUpdatedAt: String(task.lastUpdatedAt),
    ttl: typeof task.ttlMs === 'number' ? task.ttlMs : null,
    ...(typeof task.pollIntervalMs === 'number' && { pollInterval: task.pollIntervalMs }),
  };
}

/** `_meta` that ties a 2025 result to its task. */
export function relatedTaskMeta(taskId: string, meta?: unknown): Meta {
  return { ...(isObject(meta) ? meta : {}), 'io.modelcontextprotocol/related-task': { taskId } };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
