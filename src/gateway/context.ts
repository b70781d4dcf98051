/**
 * What every gateway handler receives: the gateway's dependencies, the request (`McpCall`) and the
 * per-request context tying them together, plus the small helpers all handlers share.
 */
import type { Logger } from 'pino';
import type { Implementation, RequestMeta } from '../protocol';
import { ProtocolError } from '../protocol';
import type { ControlPlane, Principal, ProjectRecord } from '../store/control-plane-types';
import type { PayloadStore } from '../store/payload-store';
import type { TaskStore } from '../store/task-store';
import type { TaskEngine } from '../temporal/task-engine';
import type { UpstreamClient } from '../upstream/client';
import type { DiscoveryCache } from '../upstream/discovery';
import type { UpstreamCatalog } from './catalog';
import type { ResultCache } from './result-cache';
import type { Resolve, Router } from './routing';

export interface GatewayDeps {
  controlPlane: ControlPlane;
  upstream: UpstreamClient;
  discovery: DiscoveryCache;
  catalog: UpstreamCatalog;
  cache: ResultCache;
  engine: TaskEngine;
  store: TaskStore;
  payloads: PayloadStore;
  serverInfo: Implementation;
  logger: Logger;
  startTimeoutMs: number;
  /** How long tasks/get waits for the live workflow before answering from the store. */
  snapshotQueryTimeoutMs?: number;
}

export interface McpCall {
  project: ProjectRecord;
  /** Who calls; decides the upstream credentials used and owns the tasks started. */
  principal: Principal;
  method: string;
  params: Record<string, unknown> & { _meta: RequestMeta };
  signal?: AbortSignal;
  /** Relays an upstream notification (progress, log message) on this request's response stream. */
  notify?: (message: Record<string, unknown>) => void;
  /** A request header by lower-case name. */
  header?: (name: string) => string | undefined;
}

export type Result = Record<string, unknown>;

/** One request as the handlers see it. */
export interface RequestContext {
  readonly deps: GatewayDeps;
  readonly router: Router;
  readonly call: McpCall;
  /** The caller's credential for each upstream, looked up once per request. */
  readonly resolve: Resolve;
}

export function parseParams<T>(
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } },
  v: unknown,
): T {
  const parsed = schema.safeParse(v);
  if (!parsed.success) throw new ProtocolError('InvalidParams', 'Invalid params');
  return parsed.data;
}

export function errorName(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
