/**
 * Caches each upstream's `server/discover` answer for the `ttlMs` it states. Capability decisions use a
 * fresh (unexpired) answer only: an expired entry is refetched before it is used.
 */
import type { DiscoverResult, Meta } from '../protocol';
import { DiscoverResultSchema, META, PROTOCOL_VERSION } from '../protocol';
import type { UpstreamClient, UpstreamEndpoint } from './client';
import { UpstreamTransportError } from './errors';

interface Entry {
  result: DiscoverResult;
  expiresAt: number;
}

export class DiscoveryCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<DiscoverResult>>();

  constructor(
    private readonly client: UpstreamClient,
    private readonly gatewayMeta: () => Meta,
    private readonly now: () => number = Date.now,
  ) {}

  async get(endpoint: UpstreamEndpoint): Promise<DiscoverResult> {
    const key = endpoint.cacheKey ?? endpoint.url;
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > this.now()) return hit.result;
    const pending = this.inflight.get(key);
    if (pending) return pending;
    const p = this.fetch(endpoint).finally(() => this.inflight.delete(key));
    this.inflight.set(key, p);
    return p;
  }

  invalidate(endpoint: UpstreamEndpoint): void {
    this.entries.delete(endpoint.cacheKey ?? endpoint.url);
  }

  /** Drops one upstream's answers under every credential (keys are `upstreamId#…`). */
  invalidateUpstream(upstreamId: string): void {
    for (const key of [...this.entries.keys()])
      if (key.startsWith(`${upstreamId}#`)) this.entries.delete(key);
  }

  private async fetch(endpoint: UpstreamEndpoint): Promise<DiscoverResult> {
    const reply = await this.client.send(endpoint, 'server/discover', {
      _meta: {
        ...this.gatewayMeta(),
        [META.protocolVersion]: PROTOCOL_VERSION,
        [META.clientCapabilities]: {},
      },
    });
    if (reply.kind === 'error') {
      throw new UpstreamTransportError(
        `Upstream "${endpoint.alias}" rejected server/discover: ${reply.error.message}`,
        true,
        reply.httpStatus,
      );
    }
    const parsed = DiscoverResultSchema.safeParse(reply.result);
    if (!parsed.success) {
      throw new UpstreamTransportError(`Upstream "${endpoint.alias}" sent an invalid server/discover`, true);
    }
    // A private answer may depend on who asked; the gateway always asks as itself, so it is safe to
    // share between the gateway's callers.
    this.entries.set(endpoint.cacheKey ?? endpoint.url, {
      result: parsed.data,
      expiresAt: this.now() + parsed.data.ttlMs,
    });
    return parsed.data;
  }
}
