/**
 * Requests and results across the era boundary, for everything but tasks (tasks.ts): the 2026 envelope
 * keys leave `_meta` (vendor keys such as `progressToken` stay), results get the 2026 members the gateway
 * relies on (`resultType`; for lists the cache hints), and `server/discover` is made from the session's
 * `initialize` result, so the gateway sees a 2026-07-28 upstream (with the Tasks extension exactly when
 * the upstream runs `tools/call` as 2025-11-25 tasks).
 */
import type { ClientCapabilities, InitializeResult } from '../../../protocol';
import { ERROR, LIST_METHODS, META, PROTOCOL_VERSION, TASKS_EXTENSION } from '../../../protocol';
import type { UpstreamEndpoint, UpstreamReply } from '../../endpoint';
import type { JsonObject } from '../../http';
import { isPlainObject } from '../../http';
import type { Variant } from './sessions';

/** How long the gateway may reuse a 2025 upstream's lists and synthesized discovery (no list-changed stream). */
export const ERA_20251125_LIST_TTL_MS = 60_000;
export const ERA_20251125_DISCOVER_TTL_MS = 60_000;

/** The 2026 per-request envelope keys; a 2025 upstream gets none of them. */
const ENVELOPE_KEYS: ReadonlySet<string> = new Set([
  META.protocolVersion,
  META.clientCapabilities,
  META.clientInfo,
  META.logLevel,
  META.serverInfo,
  META.subscriptionId,
]);

/** The request's params for a 2025 upstream: no 2026 envelope keys, no MRTR members (2026 only). */
export function era20251125Params(params: JsonObject): JsonObject {
  const { _meta, inputResponses: _answers, requestState: _state, ...rest } = params;
  const meta = Object.entries(isPlainObject(_meta) ? _meta : {}).filter(([k]) => !ENVELOPE_KEYS.has(k));
  return meta.length > 0 ? { ...rest, _meta: Object.fromEntries(meta) } : rest;
}

function capabilitiesOf(params: JsonObject): ClientCapabilities {
  const meta = isPlainObject(params._meta) ? params._meta : {};
  const caps = meta[META.clientCapabilities];
  return isPlainObject(caps) ? (caps as ClientCapabilities) : {};
}

/** Which session a request uses: one declaring form elicitation only for callers that declared it. */
export function variantOf(params: JsonObject): Variant {
  const e = capabilitiesOf(params).elicitation;
  // `elicitation: {}` means form only, per 2026-07-28.
  return e !== undefined && (e.form !== undefined || e.url === undefined) ? 'form' : 'plain';
}

export function declaresTasks(params: JsonObject): boolean {
  return capabilitiesOf(params).extensions?.[TASKS_EXTENSION] !== undefined;
}

/** Lists and discovery may depend on the credential: shared only when none is sent. */
export function cacheScopeOf(endpoint: UpstreamEndpoint): 'public' | 'private' {
  return Object.keys(endpoint.headers ?? {}).length > 0 ? 'private' : 'public';
}

/** A 2025 result as the 2026 result of the same method. */
export function era20260728Result(
  method: string,
  result: JsonObject,
  endpoint: UpstreamEndpoint,
): JsonObject {
  return {
    ...result,
    resultType: 'complete',
    ...(LIST_METHODS.has(method) && { ttlMs: ERA_20251125_LIST_TTL_MS, cacheScope: cacheScopeOf(endpoint) }),
    // 2026-07-28 requires cache hints on a read too; a 2025 server said nothing of freshness: not cached.
    ...(method === 'resources/read' && { ttlMs: 0, cacheScope: cacheScopeOf(endpoint) }),
  };
}

/**
 * `server/discover` as a 2026-07-28 upstream with these 2025 capabilities would answer it. `listChanged`
 * only when `watchable` (the upstream keeps sessions, so a standalone stream can carry its changes: list-watch.ts).
 */
export function synthesizedDiscover(
  init: InitializeResult,
  endpoint: UpstreamEndpoint,
  watchable = false,
): JsonObject {
  const c = init.capabilities;
  const changes = (cap: { listChanged?: boolean } | undefined) =>
    watchable && cap?.listChanged === true ? { listChanged: true } : {};
  const tasks = c.tasks?.requests?.tools?.call !== undefined;
  return {
    resultType: 'complete',
    supportedVersions: [PROTOCOL_VERSION],
    capabilities: {
      ...(c.tools && { tools: changes(c.tools) }),
      ...(c.prompts && { prompts: changes(c.prompts) }),
      ...(c.resources && { resources: changes(c.resources) }),
      ...(c.completions && { completions: {} }),
      ...(c.logging && { logging: {} }),
      ...(c.experimental && { experimental: c.experimental }),
      ...(tasks && { extensions: { [TASKS_EXTENSION]: {} } }),
    },
    ...(init.instructions !== undefined && { instructions: init.instructions }),
    ttlMs: ERA_20251125_DISCOVER_TTL_MS,
    cacheScope: cacheScopeOf(endpoint),
    _meta: { [META.serverInfo]: init.serverInfo },
  };
}

/** A plain call of a tool the upstream runs only as a task: the 2026 answer (-32021 naming Tasks). */
export function tasksRequired(tool: string): UpstreamReply {
  return {
    kind: 'error',
    httpStatus: ERROR.MissingRequiredClientCapability.httpStatus,
    error: {
      code: ERROR.MissingRequiredClientCapability.code,
      message: `Tool "${tool}" runs only as a task: call it with the ${TASKS_EXTENSION} extension`,
      data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    },
  };
}
