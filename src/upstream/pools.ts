/**
 * Connections toward upstreams: one pool per project upstream, not one per address. Two projects whose
 * upstreams share an address (the same SaaS server, one origin for many tenants) no longer queue behind
 * each other's slow calls: each upstream has a connection cap of its own (`upstreams.poolConnections`).
 * Pools nobody used for `upstreams.poolIdleMs` are closed, and at most `upstreams.maxPools` idle ones are
 * kept, so the number of pools follows the upstreams in use, not every upstream ever called.
 *
 * Every dispatcher toward an upstream is made by `upstreamDispatcher`, so a connect-time rule (an address
 * policy, TLS settings) is added in one place and holds for every pool, era and stream.
 */
import type { buildConnector, Dispatcher } from 'undici';
import { Agent } from 'undici';
import type { UpstreamEndpoint } from './endpoint';

export interface UpstreamDispatcherOptions {
  /** Connections per origin; unlimited when absent. */
  connections?: number;
  /** How long to wait for the answer's headers, in ms. */
  headersTimeoutMs: number;
  /** Longest silence while the answer's body is read, in ms (0: none, for streams that may stay quiet). */
  bodyTimeoutMs: number;
  /** How connections are opened: the address policy's connector refuses a forbidden address first. */
  connect?: buildConnector.connector;
}

/** The one constructor of dispatchers toward upstreams (see the module comment). */
export function upstreamDispatcher(opts: UpstreamDispatcherOptions): Dispatcher {
  return new Agent({
    ...(opts.connections !== undefined && { connections: opts.connections }),
    headersTimeout: opts.headersTimeoutMs,
    bodyTimeout: opts.bodyTimeoutMs,
    keepAliveTimeout: 10_000,
    ...(opts.connect && { connect: opts.connect }),
  });
}

export interface UpstreamPoolsOptions {
  /** Connections each project upstream may hold at once. */
  connections: number;
  /** A pool nobody used for this long (and with nothing in flight) is closed. */
  idleMs: number;
  /** Most pools kept; past it the least recently used idle ones are closed at once. */
  maxPools: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  /**
   * The address policy's connector, for upstreams whose address no operator approved: their pools open
   * every connection through it (address-policy.ts). Absent: no check (unit tests).
   */
  checkedConnect?: buildConnector.connector;
  /** The clock (tests). */
  now?: () => number;
}

interface Pool {
  dispatcher: Dispatcher;
  lastUsed: number;
}

export class UpstreamPools {
  /** In order of last use, least recent first (a Map keeps insertion order; use re-inserts). */
  private readonly pools = new Map<string, Pool>();
  private readonly now: () => number;
  private readonly sweeper: NodeJS.Timeout;
  private closing = false;

  constructor(private readonly opts: UpstreamPoolsOptions) {
    this.now = opts.now ?? Date.now;
    this.sweeper = setInterval(() => this.closeIdle(), Math.max(1_000, opts.idleMs / 2));
    this.sweeper.unref();
  }

  /** The dispatcher of this endpoint's upstream (by control-plane id; by origin without one). */
  for(endpoint: UpstreamEndpoint): Dispatcher {
    const key = poolKey(endpoint);
    let pool = this.pools.get(key);
    if (pool) {
      this.pools.delete(key);
    } else {
      if (this.closing) throw new Error('the upstream pools are closed');
      pool = {
        dispatcher: upstreamDispatcher({
          connections: this.opts.connections,
          headersTimeoutMs: this.opts.headersTimeoutMs,
          bodyTimeoutMs: this.opts.bodyTimeoutMs,
          ...(checked(endpoint) && this.opts.checkedConnect && { connect: this.opts.checkedConnect }),
        }),
        lastUsed: 0,
      };
    }
    pool.lastUsed = this.now();
    this.pools.set(key, pool);
    if (this.pools.size > this.opts.maxPools) this.closeIdle(this.pools.size - this.opts.maxPools, key);
    return pool.dispatcher;
  }

  /** Pools open now (tests, metrics). */
  get size(): number {
    return this.pools.size;
  }

  /**
   * Closes idle pools: all those unused for `idleMs`, or (with `count`) that many of the least recently
   * used however recently, except `keep`. A pool with a request in flight is never closed: its
   * connections are what that request runs on, and a new pool beside it would exceed the upstream's cap.
   */
  closeIdle(count?: number, keep?: string): void {
    const cutoff = this.now() - this.opts.idleMs;
    let left = count ?? Infinity;
    for (const [key, pool] of this.pools) {
      if (left <= 0) break;
      if (count === undefined && pool.lastUsed > cutoff) break; // the rest were used more recently
      if (key === keep || busy(pool.dispatcher)) continue;
      this.pools.delete(key);
      left--;
      pool.dispatcher.close().catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.sweeper);
    const all = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(all.map((p) => p.dispatcher.close()));
  }
}

/** Whether the endpoint's connections are held to the address policy (no operator approved its address). */
function checked(endpoint: UpstreamEndpoint): boolean {
  return endpoint.addressApproved !== true;
}

/**
 * A project upstream's identity (its control-plane id, or its origin for an endpoint without one), and
 * whether its connections are checked: an upstream whose approval changes gets another pool, so a
 * connection opened unchecked is never reused for an address no operator approved.
 */
function poolKey(endpoint: UpstreamEndpoint): string {
  const scope = checked(endpoint) ? 'checked' : 'approved';
  if (endpoint.upstreamId !== undefined) return `${scope}:id:${endpoint.upstreamId}`;
  try {
    return `${scope}:origin:${new URL(endpoint.url).origin}`;
  } catch {
    return `${scope}:url:${endpoint.url}`;
  }
}

/** Whether any origin of the agent has a request running or waiting for a connection. */
function busy(dispatcher: Dispatcher): boolean {
  const stats = (dispatcher as Agent).stats as Record<
    string,
    { running?: number; pending?: number; queued?: number }
  >;
  return Object.values(stats).some((s) => (s.running ?? 0) + (s.pending ?? 0) + (s.queued ?? 0) > 0);
}
