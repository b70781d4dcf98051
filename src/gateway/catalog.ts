/**
 * What each upstream currently offers (all pages of tools/list and prompts/list), cached for the
 * `ttlMs` the upstream states. Routing of non-namespaced names, collision checks and tool annotations
 * (read-only, idempotent, `x-mcp-header`) read from here; clients' list calls are paginated separately.
 * One entry per upstream and credential scope (a `per_user` upstream has one per user), at most 10,000,
 * least recently used out first: a user who left, an authorization revoked or an upstream
 * removed no longer keeps its lists for the life of the process.
 */
import { LRUCache } from 'lru-cache';
import type { Implementation, Meta, Tool } from '../protocol';
import { META, PROTOCOL_VERSION, ToolSchema, UI_EXTENSION, UI_MIME_TYPE } from '../protocol';
import type { UpstreamClient, UpstreamEndpoint } from '../upstream/client';
import { UpstreamTransportError } from '../upstream/errors';

export interface Prompt {
  name: string;
  [key: string]: unknown;
}

interface Entry<T> {
  items: T[];
  expiresAt: number;
}

/** Upper bound on pages read for one catalog, so a looping cursor cannot hold the gateway. */
const MAX_PAGES = 100;
/**
 * Lists kept at most per kind, as many as discovery answers (upstream/discovery.ts). By count only: sizing
 * each list would stringify it on the event loop whenever it is stored (an upstream stating no `ttlMs`
 * has it stored on every call), and a list's size is already bounded by the answer's.
 */
const MAX_LISTS = 10_000;

function listCache<T>(): LRUCache<string, Entry<T>> {
  return new LRUCache<string, Entry<T>>({ max: MAX_LISTS });
}

export class UpstreamCatalog {
  private readonly tools = listCache<Tool>();
  private readonly prompts = listCache<Prompt>();

  constructor(
    private readonly client: UpstreamClient,
    private readonly gatewayInfo: Implementation,
    private readonly now: () => number = Date.now,
  ) {}

  async toolsOf(endpoint: UpstreamEndpoint): Promise<Tool[]> {
    return this.cached(this.tools, endpoint, 'tools/list', 'tools', (v) => {
      const t = ToolSchema.safeParse(v);
      return t.success ? t.data : undefined;
    });
  }

  async promptsOf(endpoint: UpstreamEndpoint): Promise<Prompt[]> {
    return this.cached(this.prompts, endpoint, 'prompts/list', 'prompts', (v) =>
      typeof v === 'object' && v !== null && typeof (v as Prompt).name === 'string'
        ? (v as Prompt)
        : undefined,
    );
  }

  invalidate(endpoint: UpstreamEndpoint): void {
    this.invalidateKey(endpoint.cacheKey ?? endpoint.url);
  }

  /** Drops what is cached under one endpoint's cache key (an upstream announced a list change). */
  invalidateKey(key: string): void {
    this.tools.delete(key);
    this.prompts.delete(key);
  }

  /** Drops what is cached of one upstream under every credential (keys are `upstreamId#…`). */
  invalidateUpstream(upstreamId: string): void {
    for (const cache of [this.tools, this.prompts] as LRUCache<string, Entry<unknown>>[])
      for (const key of [...cache.keys()]) if (key.startsWith(`${upstreamId}#`)) cache.delete(key);
  }

  /**
   * The tool names this process last read from an upstream, under any credential (expired entries
   * count: the last listing), without asking it; undefined when it has read none. For views that say
   * which hosting rules match nothing (docs/admin.md, "Hosted tools").
   */
  knownToolNames(upstreamId: string): string[] | undefined {
    let names: Set<string> | undefined;
    for (const [key, entry] of this.tools.entries()) {
      if (!key.startsWith(`${upstreamId}#`)) continue;
      names ??= new Set();
      for (const t of entry.items) names.add(t.name);
    }
    return names && [...names];
  }

  private async cached<T>(
    cache: LRUCache<string, Entry<T>>,
    endpoint: UpstreamEndpoint,
    method: string,
    field: string,
    parse: (v: unknown) => T | undefined,
  ): Promise<T[]> {
    const hit = cache.get(endpoint.cacheKey ?? endpoint.url);
    if (hit && hit.expiresAt > this.now()) return hit.items;
    const items: T[] = [];
    let ttlMs = Number.POSITIVE_INFINITY;
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const reply = await this.client.send(endpoint, method, {
        ...(cursor !== undefined && { cursor }),
        _meta: this.meta(),
      });
      if (reply.kind === 'error') {
        throw new UpstreamTransportError(
          `Upstream "${endpoint.alias}" refused ${method}: ${reply.error.message}`,
          true,
        );
      }
      const r = reply.result;
      for (const raw of Array.isArray(r[field]) ? (r[field] as unknown[]) : []) {
        const item = parse(raw);
        if (item !== undefined) items.push(item);
      }
      if (typeof r.ttlMs === 'number') ttlMs = Math.min(ttlMs, r.ttlMs);
      cursor = typeof r.nextCursor === 'string' ? r.nextCursor : undefined;
      if (cursor === undefined) break;
    }
    const ttl = Number.isFinite(ttlMs) ? ttlMs : 0;
    cache.set(endpoint.cacheKey ?? endpoint.url, { items, expiresAt: this.now() + ttl });
    return items;
  }

  private meta(): Meta {
    return {
      [META.protocolVersion]: PROTOCOL_VERSION,
      // The gateway relays MCP Apps views: a server that lists its view tools only to hosts that show
      // views (as the extension advises) lists them here too, so routing and annotations know them.
      [META.clientCapabilities]: { extensions: { [UI_EXTENSION]: { mimeTypes: [UI_MIME_TYPE] } } },
      [META.clientInfo]: this.gatewayInfo,
    };
  }
}
