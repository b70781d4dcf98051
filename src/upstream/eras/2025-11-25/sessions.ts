/**
 * Sessions with 2025-era upstreams. One per upstream, credential scope (`UpstreamEndpoint.cacheKey`; the
 * upstream's identity, identity.ts, without one) and variant (`form`: the gateway declared form
 * elicitation, for callers that declared it; `plain`: nothing), initialized once and reused by every
 * request, replica and worker: the session lives in the store (`Era20251125SessionStore`), this process keeps
 * a copy, and a session opened at another address than the upstream's current one is never used. A
 * session the upstream forgot is replaced (only if it is still the one that failed, so concurrent
 * replacements agree). At shutdown the sessions this process used are ended (the transport's `end`)
 * unless upstream tasks live in them (pinned until the tasks' ttl).
 *
 * The gateway never declares sampling, roots or client-side tasks toward a 2025 upstream.
 */
import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Implementation, LegacySessionRecord } from '../../../protocol';
import {
  InitializeResultSchema,
  isLegacyVersion,
  LEGACY_METHOD,
  LEGACY_PROTOCOL_VERSIONS,
} from '../../../protocol';
import type { UpstreamEndpoint, UpstreamReply } from '../../endpoint';
import { UpstreamTransportError } from '../../errors';
import { addressOf, upstreamKey } from '../../identity';
import type { Exchange, Era20251125Wire, WireTarget } from './wire';

/** Where sessions are shared between processes (src/store/sessions/upstream-sessions.ts). */
export interface Era20251125SessionStore {
  get(scope: string): Promise<LegacySessionRecord | undefined>;
  /** Stores `record` unless the scope has a session already; answers the scope's session now. */
  add(scope: string, record: LegacySessionRecord): Promise<LegacySessionRecord>;
  /** Forgets the scope's session if it is still this one. */
  remove(scope: string, nonce: string): Promise<void>;
  /** Keeps the session from being ended at shutdown before `until` (the latest pin wins). */
  pin(scope: string, nonce: string, until: string): Promise<void>;
  /** Forgets the session if it is still this one and not pinned; true when it did (the caller ends it). */
  release(scope: string, nonce: string): Promise<boolean>;
}

export type Variant = 'plain' | 'form';

export interface LiveSession extends LegacySessionRecord {
  scope: string;
  variant: Variant;
  endpoint: UpstreamEndpoint;
}

/**
 * The upstream refused the 2025 era (it speaks another), or may have (`reply`: an HTTP 400 answer, the
 * way a 2026-only server refuses a request without the 2026 envelope): the caller re-probes it.
 */
export class EraRefusedError extends Error {
  override readonly name = 'EraRefusedError';
  constructor(
    message: string,
    readonly reply?: UpstreamReply,
  ) {
    super(message);
  }
}

export function targetOf(session: LiveSession): WireTarget {
  return {
    endpoint: session.endpoint,
    protocolVersion: session.protocolVersion,
    sessionId: session.sessionId,
  };
}

/** `initialize` (offering 2025-11-25, accepting every 2025 version) and `notifications/initialized`. */
export async function handshake(
  wire: Era20251125Wire,
  endpoint: UpstreamEndpoint,
  capabilities: Record<string, unknown>,
  clientInfo: Implementation,
  signal?: AbortSignal,
): Promise<Omit<LegacySessionRecord, 'nonce' | 'upstreamId'>> {
  const alias = endpoint.alias;
  const exchange = await wire.request(
    { endpoint },
    LEGACY_METHOD.initialize,
    { protocolVersion: LEGACY_PROTOCOL_VERSIONS[0], capabilities, clientInfo },
    signal ? { signal } : {},
  );
  if (exchange.kind === 'version-refused') throw new EraRefusedError(exchange.message);
  if (exchange.kind === 'error' && exchange.error.code === -32601)
    throw new EraRefusedError(exchange.error.message);
  if (exchange.kind !== 'result') throw failed(alias, 'initialize', exchange);
  const parsed = InitializeResultSchema.safeParse(exchange.result);
  if (!parsed.success)
    throw new UpstreamTransportError(`Upstream "${alias}" sent an invalid initialize result`, true);
  const version = parsed.data.protocolVersion;
  const sessionId = exchange.sessionId ?? null;
  const target: WireTarget = { endpoint, protocolVersion: version, sessionId };
  if (!isLegacyVersion(version)) {
    await wire.end(target).catch(() => {});
    throw new EraRefusedError(
      `answered initialize with protocol version ${version}, which the gateway does not speak`,
    );
  }
  const done = await wire.deliver(target, { method: LEGACY_METHOD.initialized }, signal);
  if (done.kind !== 'accepted') throw failed(alias, LEGACY_METHOD.initialized, done);
  return { url: addressOf(endpoint), protocolVersion: version, sessionId, initialize: parsed.data };
}

function failed(alias: string, step: string, exchange: Exchange): UpstreamTransportError {
  const why =
    exchange.kind === 'error'
      ? `${exchange.error.code} ${exchange.error.message}`
      : 'message' in exchange
        ? exchange.message
        : exchange.kind;
  return new UpstreamTransportError(`Upstream "${alias}" refused ${step}: ${why}`, true);
}

/**
 * This process's copies of sessions, one per scope (upstream × credential scope × variant), least recently
 * used pushed out first: a gateway whose users each hold a session with a 2025 upstream does not keep every
 * one it ever used. A session pushed out stays in the store (the next request reads it from there) and is
 * not ended by this process at shutdown, as a session another process opened is not.
 */
export const MAX_LIVE_SESSIONS = 10_000;

export class Era20251125Sessions {
  private readonly live: LRUCache<string, LiveSession>;
  private readonly opening = new Map<string, Promise<LiveSession>>();

  constructor(
    private readonly wire: Era20251125Wire,
    private readonly store: Era20251125SessionStore,
    private readonly clientInfo: Implementation,
    maxLive = MAX_LIVE_SESSIONS,
  ) {
    this.live = new LRUCache({ max: maxLive });
  }

  static scopeOf(endpoint: UpstreamEndpoint, variant: Variant): string {
    return `${endpoint.cacheKey ?? upstreamKey(endpoint)}|${variant}`;
  }

  /** The scope's session, initialized if there is none yet. */
  async acquire(endpoint: UpstreamEndpoint, variant: Variant): Promise<LiveSession> {
    const scope = Era20251125Sessions.scopeOf(endpoint, variant);
    const known = this.live.get(scope);
    if (known && known.url === addressOf(endpoint)) return { ...known, endpoint };
    let pending = this.opening.get(scope);
    if (!pending) {
      pending = this.open(scope, endpoint, variant).finally(() => this.opening.delete(scope));
      this.opening.set(scope, pending);
    }
    return { ...(await pending), endpoint };
  }

  /** The scope's current session, if it is still the one named by `nonce` (a task's session). */
  async find(endpoint: UpstreamEndpoint, variant: Variant, nonce: string): Promise<LiveSession | undefined> {
    const scope = Era20251125Sessions.scopeOf(endpoint, variant);
    const known = this.live.get(scope);
    if (known?.nonce === nonce) return { ...known, endpoint };
    const stored = await this.store.get(scope);
    if (stored?.nonce !== nonce || stored.url !== addressOf(endpoint)) return undefined;
    return this.remember({ ...stored, scope, variant, endpoint });
  }

  /** The upstream forgot this session: drop it (if still current) and open a successor. */
  async renew(session: LiveSession): Promise<LiveSession> {
    await this.forget(session);
    return this.acquire(session.endpoint, session.variant);
  }

  /** The upstream forgot this session: nothing of it can be used any more. */
  async forget(session: LiveSession): Promise<void> {
    if (this.live.peek(session.scope)?.nonce === session.nonce) this.live.delete(session.scope);
    await this.store.remove(session.scope, session.nonce);
  }

  /** Upstream tasks live in the session until `until`: it is not ended at shutdown before then. */
  async pin(session: LiveSession, until: string): Promise<void> {
    await this.store.pin(session.scope, session.nonce, until);
  }

  /** Ends the sessions this process used, unless they are pinned. */
  async close(onError: (err: unknown, session: LiveSession) => void): Promise<void> {
    const sessions = [...this.live.values()];
    this.live.clear();
    await Promise.all(
      sessions.map(async (s) => {
        try {
          if (await this.store.release(s.scope, s.nonce)) await this.wire.end(targetOf(s));
        } catch (err) {
          onError(err, s);
        }
      }),
    );
  }

  private async open(scope: string, endpoint: UpstreamEndpoint, variant: Variant): Promise<LiveSession> {
    const stored = await this.store.get(scope);
    if (stored && stored.url === addressOf(endpoint) && isLegacyVersion(stored.protocolVersion)) {
      return this.remember({ ...stored, scope, variant, endpoint });
    }
    if (stored) await this.store.remove(scope, stored.nonce);
    const capabilities = variant === 'form' ? { elicitation: { form: {} } } : {};
    const opened = await handshake(this.wire, endpoint, capabilities, this.clientInfo);
    const record: LegacySessionRecord = {
      ...opened,
      nonce: randomBytes(8).toString('hex'),
      upstreamId: endpoint.upstreamId ?? null,
    };
    const winner = await this.store.add(scope, record);
    // Another process initialized the scope at the same time: use its session, end ours.
    if (winner.nonce !== record.nonce) await this.wire.end({ endpoint, ...opened }).catch(() => {});
    return this.remember({ ...winner, scope, variant, endpoint });
  }

  private remember(session: LiveSession): LiveSession {
    this.live.set(session.scope, session);
    return session;
  }
}
