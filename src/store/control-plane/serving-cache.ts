/**
 * What the gateway reads from the control plane for every MCP request (who a token is, the project,
 * whether the caller may call it, the credential for each upstream), cached per process with explicit
 * invalidation rather than a lifetime: every control-plane change bumps one counter in the database in
 * its own transaction (audit.ts), and this cache compares the counter at most every `checkEveryMs`
 * (default 250 ms) and drops everything when it moved. So a revoked token, a removed member or a changed
 * upstream stops being served on every replica within that interval, and a change made through this
 * process at once. What expires by the clock (tokens, authorizations) is checked on every use. Each space
 * holds at most `maxPerSpace` entries, the oldest going first: some keys come from requests (every
 * unknown bearer token is cached as unknown), and between two changes nothing else would drop them.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../schema';

export interface CachedEntry<T> {
  value: T;
  /** ISO time after which the entry must not be used (a token's or an authorization's expiry). */
  expiresAt?: string | null;
}

export class ServingCache {
  private readonly maps = new Map<string, Map<string, CachedEntry<unknown>>>();
  private generation: number | undefined;
  /** Moves whenever the cache is dropped: a read that started before must not be stored after. */
  private epoch = 0;
  private checkedAt = 0;
  private checking: Promise<void> | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    /** The store's clock, which entries' `expiresAt` are compared with. */
    private readonly nowIso: () => string,
    private readonly checkEveryMs = 250,
    /** Far more than the tokens, projects and credentials a replica serves between two changes. */
    private readonly maxPerSpace = 10_000,
  ) {}

  /** The cached value of `key` in `space`, or `load()`'s (then cached). */
  async get<T>(space: string, key: string, load: () => Promise<CachedEntry<T>>): Promise<T> {
    await this.fresh();
    let map = this.maps.get(space);
    if (!map) {
      map = new Map();
      this.maps.set(space, map);
    }
    const hit = map.get(key) as CachedEntry<T> | undefined;
    if (hit && !(hit.expiresAt && hit.expiresAt <= this.nowIso())) return hit.value;
    const epoch = this.epoch;
    const entry = await load();
    // Cache only what was read since the last drop: a change that landed meanwhile wins.
    if (epoch === this.epoch) {
      if (!map.has(key) && map.size >= this.maxPerSpace) map.delete(map.keys().next().value as string);
      map.set(key, entry);
    }
    return entry.value;
  }

  /** Drops everything (a change written through this process). */
  clear(): void {
    this.maps.clear();
    this.epoch++;
  }

  private async fresh(): Promise<void> {
    if (Date.now() - this.checkedAt < this.checkEveryMs) return;
    this.checking ??= this.check().finally(() => (this.checking = undefined));
    await this.checking;
  }

  private async check(): Promise<void> {
    const row = await this.db
      .selectFrom('control_plane_generation')
      .select('generation')
      .where('id', '=', 1)
      .executeTakeFirst();
    const generation = Number(row?.generation ?? 0);
    if (generation !== this.generation) {
      this.clear();
      this.generation = generation;
    }
    this.checkedAt = Date.now();
  }
}
