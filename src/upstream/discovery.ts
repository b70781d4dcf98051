/**
 * Caches each upstream's `server/discover` answer for the `ttlMs` it states. Capability decisions use a
 * fresh (unexpired) answer only: an expired entry is refetched before it is used. Bounded (MAX_ANSWERS,
 * least recently used out first).
 */
import { LRUCache } from 'lru-cache';
import type { DiscoverResult, Meta } from '../protocol';
import { DiscoverResultSchema, META, PROTOCOL_VERSION } from '../protocol';
import type { UpstreamClient, UpstreamEndpoint } from './client';
import { UpstreamTransportError } from './errors';
import { upstreamKey } from './identity';

/**
 * Answers kept at most: one per upstream and credential scope (a `per_user` upstream has one per user),
 * so a gateway with many users does not keep every answer it ever fetched. An answer is a few KB.
 */
const MAX_ANSWERS = 10_000;

export class DiscoveryCache {
  // lru-cache: the bound, each answer's own TTL, and one fetch per key however many callers wait for it.
  private readonly answers: LRUCache<string, DiscoverResult, UpstreamEndpoint>;

  constructor(
    private readonly client: UpstreamClient,
    private readonly gatewayMeta: () => Meta,
  ) {
    this.answers = new LRUCache({
      max: MAX_ANSWERS,
      fetchMethod: async (_key, _stale, { options, context }) => {
        const result = await this.fetch(context);
        // Fresh for the time the upstream states (a TTL of 0 would mean "forever" to lru-cache).
        options.ttl = Math.max(1, result.ttlMs);
        return result;
      },
    });
  }

  async get(endpoint: UpstreamEndpoint): Promise<DiscoverResult> {
    const result = await this.answers.fetch(endpoint.cacheKey ?? upstreamKey(endpoint), {
      context: endpoint,
    });
    if (!result)
      throw new UpstreamTransportError(`Upstream "${endpoint.alias}" sent no server/discover`, true);
    return result;
  }

  invalidate(endpoint: UpstreamEndpoint): void {
    this.answers.delete(endpoint.cacheKey ?? upstreamKey(endpoint));
  }

  /** Drops one upstream's answers under every credential (keys are `upstreamId#…`). */
  invalidateUpstream(upstreamId: string): void {
    for (const key of [...this.answers.keys()])
      if (key.startsWith(`${upstreamId}#`)) this.answers.delete(key);
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
    return parsed.data;
  }
}
