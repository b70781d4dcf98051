/**
 * What every gateway handler receives: the gateway's dependencies, the request (`McpCall`) and the
 * per-request context tying them together, plus the small helpers all handlers share.
 */
import type { CallerToken } from './caller-token';
import type { Logger } from 'pino';
import type { Implementation, InputRequests, RequestMeta } from '../protocol';
import { ProtocolError } from '../protocol';
import type { ControlPlane, Principal, ProjectRecord } from '../store/control-plane/types';
import { principalId } from '../store/control-plane/types';
import type { FirstCalls } from '../store/tasks/first-calls';
import type { PayloadStore } from '../store/tasks/payload-store';
import type { TaskStore } from '../store/tasks/task-store';
import type { DirectCall, DirectOutcome } from '../temporal/first-call';
import type { TaskEngine } from '../temporal/task-engine';
import type { UpstreamClient, UpstreamEndpoint } from '../upstream/client';
import type { DiscoveryCache } from '../upstream/discovery';
import type { UpstreamCatalog } from './catalog';
import type { FairShares, ShareOwner } from './fair-share';
import type { ResultCache } from './responses/result-cache';
import type { NameOwners, Resolve } from './name-owners';

export interface GatewayDeps {
  controlPlane: ControlPlane;
  upstream: UpstreamClient;
  discovery: DiscoveryCache;
  catalog: UpstreamCatalog;
  cache: ResultCache;
  engine: TaskEngine;
  store: TaskStore;
  payloads: PayloadStore;
  /** Claims a task's first call (the API abandons a creation that did not start in time). */
  firstCalls?: FirstCalls;
  /**
   * The first call of a task-aware call made by the API (`tasks.firstCallFrom: api`,
   * src/temporal/first-call.ts). Absent: the worker makes it (update-with-start, the earlier path).
   */
  firstCall?: FirstCallPort;
  serverInfo: Implementation;
  logger: Logger;
  startTimeoutMs: number;
  /** Tasks created now are polled by the workers' watch hub (`tasks.watchBy: hub`); absent: by watch activities. */
  watchByHub?: { maxWatchMs: number };
  /** A keyed digest (Cipher.digest): what an approval request shows of its call's arguments. */
  digest(purpose: string, text: string): string;
  /** Longest an approval may wait: the arguments are kept no longer (payload retention, docs/approvals.md). */
  approvalWaitLimitMs?: number;
  /** Each tenant's share of this replica: requests and task creations in flight, creations per second. */
  shares: FairShares;
}

/** The API's own first call: the answer, or the task it created, recorded and started (or due to be). */
export interface FirstCallPort {
  run(endpoint: UpstreamEndpoint, direct: DirectCall): Promise<DirectOutcome>;
}

export interface McpCall {
  project: ProjectRecord;
  /** Who calls; decides the upstream credentials used and owns the tasks started. */
  principal: Principal;
  /** The OAuth access token the caller signed in with, for upstreams that exchange it (caller-token.ts). */
  oauthToken?: CallerToken;
  method: string;
  params: Record<string, unknown> & { _meta: RequestMeta };
  signal?: AbortSignal;
  /** Relays an upstream notification (progress, log message) on this request's response stream. */
  notify?: (message: Record<string, unknown>) => void;
  /**
   * Resolves when the response stream has room again (the client's socket took what was queued): the
   * upstream read that relays notifications waits for it, so a client that does not read stops the
   * upstream instead of filling the gateway's memory.
   */
  whenWritable?: () => Promise<void>;
  /** A request header by lower-case name. */
  header?: (name: string) => string | undefined;
  /** Keeps the response stream open while the gateway waits on a task for the client (SSE comment). */
  keepAlive?: () => void;
  /** How the caller's protocol era takes tasks; set by the 2025-era client adapter (src/api/mcp/legacy). */
  tasks?: CallTaskOptions;
}

export interface CallTaskOptions {
  /** tools/call asked for a task (2025-11-25 `params.task`): even a synchronous outcome becomes a task. */
  force?: boolean;
  /** tools/list: mark tools of task-capable upstreams `execution.taskSupport: "optional"`. */
  advertise?: boolean;
  /**
   * While the gateway waits on a task for a client that cannot take one, hands it the task's open input
   * requests (a 2025 client answers them on its session). False when they cannot reach the client; the
   * task then cannot get its input.
   */
  relayInput?: (taskKey: string, requests: InputRequests) => boolean;
  /** The gateway started a task to answer this call inline (its answer now survives the request). */
  onStarted?: (taskId: string) => void;
}

export type Result = Record<string, unknown>;

/** One request as the handlers see it. */
export interface RequestContext {
  readonly deps: GatewayDeps;
  readonly owners: NameOwners;
  readonly call: McpCall;
  /** The caller's credential for each upstream, looked up once per request. */
  readonly resolve: Resolve;
}

/** Whose fair share a call counts against: its project and, within it, its caller. */
export function shareOwner(call: McpCall): ShareOwner {
  const p = principalId(call.principal);
  return { projectId: call.project.id, callerId: `${p.kind}:${p.id}` };
}

export function parseParams<T>(
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } },
  v: unknown,
): T {
  const parsed = schema.safeParse(v);
  if (!parsed.success) throw new ProtocolError('InvalidParams', 'Invalid params');
  return parsed.data;
}

export { errorText as errorName } from '../telemetry/log-context';
