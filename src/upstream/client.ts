/**
 * The gateway's MCP client toward upstream servers. The gateway speaks 2026-07-28 to it whatever the
 * upstream speaks: each upstream's era is remembered (src/upstream/eras.ts), 2026-07-28 upstreams get the
 * request as it is (modern.ts), and 2025-era upstreams get it translated by src/upstream/legacy, which
 * answers as a 2026-07-28 upstream with the Tasks extension would.
 */
import type { Dispatcher } from 'undici';
import type { Implementation, Meta, UpstreamProbe } from '../protocol';
import { METHOD } from '../protocol';
import { upstreamCallSeconds, upstreamCalls } from '../telemetry/metrics';
import type { UpstreamEndpoint, UpstreamReply, UpstreamRequestOptions } from './endpoint';
import { EraSwitch } from './eras';
import { UpstreamTransportError } from './errors';
import { LegacyUpstream } from './legacy';
import type { LegacySessionStore } from './legacy/sessions';
import { MemorySessionStore } from './legacy/memory-store';
import { sendModern } from './modern';
import { upstreamDispatcher, UpstreamPools } from './pools';

export type { UpstreamEndpoint, UpstreamReply, UpstreamRequestOptions } from './endpoint';

export interface UpstreamClientOptions {
  timeoutMs?: number;
  /** One connection pool per project upstream (`upstreams.pool*`, src/upstream/pools.ts). */
  pools?: { connections: number; idleMs: number; maxPools: number };
  /** The gateway's identity in a 2025-era `initialize` (`clientInfo`). */
  clientInfo?: Implementation;
  /** Where sessions with 2025-era upstreams are shared between processes; in memory when absent. */
  legacySessions?: LegacySessionStore;
  /** Records what probing an upstream found out, under its control-plane id. */
  recordProbe?: (upstreamId: string, probe: UpstreamProbe) => Promise<void>;
  /** Problems nobody is waiting for (a session that could not be ended, a probe not recorded). */
  onWarning?: (message: string, detail: Record<string, unknown>) => void;
}

const DEFAULT_CLIENT_INFO: Implementation = { name: 'taskrouter', version: '0' };

/** The methods the gateway sends upstream; anything else is counted as `other`, so labels stay bounded. */
const METRIC_METHODS: ReadonlySet<string> = new Set([
  ...Object.values(METHOD),
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'completion/complete',
]);

/** A closed set: whether the request may have reached the upstream is what an operator acts on. */
function failureOutcome(err: unknown, signal: AbortSignal | undefined): string {
  if (signal?.aborted) return 'cancelled';
  if (err instanceof UpstreamTransportError && !err.mayHaveReached) return 'unreachable';
  return 'failed';
}

export class UpstreamClient {
  private readonly pools: UpstreamPools;
  /** For `subscriptions/listen` streams: long quiet stretches are normal, so no body timeout. */
  private readonly listenDispatcher: Dispatcher;
  private readonly legacy: LegacyUpstream;
  private readonly eras: EraSwitch;

  constructor(opts: UpstreamClientOptions = {}) {
    const timeout = opts.timeoutMs ?? 60_000;
    this.pools = new UpstreamPools({
      connections: opts.pools?.connections ?? 128,
      idleMs: opts.pools?.idleMs ?? 60_000,
      maxPools: opts.pools?.maxPools ?? 1_000,
      headersTimeoutMs: timeout,
      bodyTimeoutMs: timeout,
    });
    // Shared: a listen stream holds its connection for as long as it is open, so this agent has no
    // connection cap to wait behind (the streams are bounded per caller where they are opened).
    this.listenDispatcher = upstreamDispatcher({ headersTimeoutMs: timeout, bodyTimeoutMs: 0 });
    const warn = opts.onWarning ?? (() => {});
    const pooled = (endpoint: UpstreamEndpoint) => this.pools.for(endpoint);
    this.legacy = new LegacyUpstream({
      dispatcher: pooled,
      watchDispatcher: () => this.listenDispatcher,
      store: opts.legacySessions ?? new MemorySessionStore(),
      clientInfo: opts.clientInfo ?? DEFAULT_CLIENT_INFO,
      warn,
    });
    this.eras = new EraSwitch({
      modern: (endpoint, method, params, o) => sendModern(pooled(endpoint), endpoint, method, params, o),
      legacy: this.legacy,
      ...(opts.recordProbe && { record: opts.recordProbe }),
      warn,
    });
  }

  /** Ends the sessions this process opened with 2025-era upstreams (unless tasks live in them), then closes. */
  async close(): Promise<void> {
    await this.legacy.close();
    await this.listenDispatcher.destroy();
    await this.pools.close();
  }

  /**
   * Sends one 2026-07-28 request. `params._meta` must already hold the per-request envelope for this
   * hop. Resolves with the result or the JSON-RPC error; rejects with UpstreamTransportError otherwise.
   */
  async send(
    endpoint: UpstreamEndpoint,
    method: string,
    params: Record<string, unknown> & { _meta: Meta },
    opts: UpstreamRequestOptions = {},
  ): Promise<UpstreamReply> {
    // Counted here, once per request in 2026-07-28 terms, whichever era's exchanges carry it.
    const labels = {
      project: endpoint.project ?? '',
      upstream: endpoint.alias,
      method: METRIC_METHODS.has(method) ? method : 'other',
    };
    const stopTimer = upstreamCallSeconds.startTimer(labels);
    try {
      const reply = await this.eras.send(endpoint, method, params, opts);
      upstreamCalls.inc({ ...labels, outcome: reply.kind === 'result' ? 'ok' : 'error' });
      return reply;
    } catch (err) {
      upstreamCalls.inc({ ...labels, outcome: failureOutcome(err, opts.signal) });
      throw err;
    } finally {
      stopTimer();
    }
  }

  /**
   * Holds a 2026-07-28 `subscriptions/listen` stream open, handing each notification to `onNotification`,
   * until the upstream ends it (resolves with its final reply) or `signal` aborts (rejects). A 2025-era
   * upstream's list changes are watched on a session of the watch's own (legacy/list-watch.ts), handed
   * over in the same shape.
   */
  async listen(
    endpoint: UpstreamEndpoint,
    params: Record<string, unknown> & { _meta: Meta },
    onNotification: (message: Record<string, unknown>) => void,
    signal: AbortSignal,
  ): Promise<UpstreamReply> {
    if (this.eras.eraOf(endpoint) === 'legacy') {
      await this.legacy.watchLists(endpoint, onNotification, signal);
      return { kind: 'result', result: { resultType: 'complete' } };
    }
    return sendModern(this.listenDispatcher, endpoint, 'subscriptions/listen', params, {
      signal,
      onNotification,
    });
  }

  /** Finds out (again) which era the upstream speaks, and records it. */
  async probe(endpoint: UpstreamEndpoint): Promise<UpstreamProbe> {
    return this.eras.probe(endpoint);
  }
}
