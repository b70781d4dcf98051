/**
 * Result cache for ordinary `tools/call`s (pure, in memory, no I/O). Only read-only tools (`readOnlyHint`)
 * or allow-listed tools are cached, never MRTR retries, and only `complete`, non-error results. The key
 * covers project, upstream, tool, canonical arguments and the caller, so one caller's result is never
 * served to another. Entries are stored as JSON text: every `get` parses a fresh deep copy.
 * See docs/response-processing.md.
 */
import { createHash } from 'node:crypto';
import type { CacheConfig } from '../../config/config';

export interface CacheScope {
  project: string;
  upstream: string;
  /** The upstream's own tool name (after namespacing is undone). */
  tool: string;
  arguments: unknown;
  /** Who asked: e.g. `{ kind: 'apiKey', id: '…' }`. Part of the key, so entries are never shared. */
  caller: { kind: string; id: string };
}

/**
 * JSON with object keys sorted (UTF-16 code unit order) at every depth, so equal values give equal text
 * whatever the key order. Follows JSON.stringify otherwise: `toJSON` is honoured, `undefined`, functions
 * and symbols are left out of objects and become `null` in arrays, non-finite numbers become `null`.
 * A top-level `undefined` gives `null`. Throws on cycles and bigints, like JSON.stringify.
 */
export function canonicalJson(value: unknown): string {
  return write(value, new Set()) ?? 'null';
}

function write(value: unknown, seen: Set<object>): string | undefined {
  if (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { toJSON?: unknown }).toJSON === 'function'
  ) {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'bigint') throw new TypeError('canonicalJson: cannot serialize a bigint');
    return JSON.stringify(value) as string | undefined;
  }
  if (seen.has(value)) throw new TypeError('canonicalJson: cyclic value');
  seen.add(value);
  let out: string;
  if (Array.isArray(value)) {
    out = `[${value.map((v: unknown) => write(v, seen) ?? 'null').join(',')}]`;
  } else {
    const parts: string[] = [];
    for (const key of Object.keys(value).sort()) {
      const v = write((value as Record<string, unknown>)[key], seen);
      if (v !== undefined) parts.push(`${JSON.stringify(key)}:${v}`);
    }
    out = `{${parts.join(',')}}`;
  }
  seen.delete(value);
  return out;
}

/**
 * sha256 (hex) of the canonical JSON of every part of the scope, as one array: parts cannot run into each
 * other, and absent arguments (`undefined` → `null`) differ from `{}` (the cache does not guess that an
 * upstream treats them alike).
 */
export function cacheKey(scope: CacheScope): string {
  const parts = [
    'taskrouter.cache.v1',
    scope.project,
    scope.upstream,
    scope.tool,
    scope.arguments,
    scope.caller.kind,
    scope.caller.id,
  ];
  return createHash('sha256').update(canonicalJson(parts), 'utf8').digest('hex');
}

/**
 * Whether a call may be answered from, and stored in, the cache: the project cache is enabled, this is
 * not an MRTR retry (a call carrying `inputResponses` / `requestState`), and the tool is marked
 * `readOnlyHint: true` by its upstream or its exposed name is in the project's `allowTools`.
 */
export function isCacheableCall(opts: {
  cache: CacheConfig;
  exposedName: string;
  annotations?: { readOnlyHint?: boolean };
  isMrtrRetry: boolean;
}): boolean {
  if (!opts.cache.enabled || opts.isMrtrRetry) return false;
  return opts.annotations?.readOnlyHint === true || opts.cache.allowTools.includes(opts.exposedName);
}

/** Only final successes are cached: `resultType: 'complete'` and not `isError: true`. */
export function isCacheableResult(result: Record<string, unknown>): boolean {
  return result.resultType === 'complete' && result.isError !== true;
}

interface Entry {
  json: string;
  bytes: number;
  expiresAt: number;
}

interface ProjectCache {
  /** Map order is recency order: the first entry is the least recently used. */
  entries: Map<string, Entry>;
  bytes: number;
  /**
   * No entry expires before this (a lower bound: removals leave it as it was), so a sweep before then
   * has nothing to find. A full cache would otherwise scan every entry on every store.
   */
  soonestExpiry: number;
  hits: number;
  misses: number;
}

export interface CacheStats {
  entries: number;
  bytes: number;
  hits: number;
  misses: number;
}

/** Per-project LRU with TTL, bounded by entry count and summed JSON bytes. */
export class ResultCache {
  private readonly projects = new Map<string, ProjectCache>();
  private readonly now: () => number;

  constructor(opts: { now?: () => number } = {}) {
    this.now = opts.now ?? Date.now;
  }

  /** A deep copy of the cached result, or undefined when missing or expired (counted as a miss). */
  get(project: string, key: string): Record<string, unknown> | undefined {
    const p = this.project(project);
    const entry = p.entries.get(key);
    if (entry === undefined || entry.expiresAt <= this.now()) {
      if (entry !== undefined) this.remove(p, key, entry);
      p.misses++;
      return undefined;
    }
    p.entries.delete(key);
    p.entries.set(key, entry);
    p.hits++;
    return JSON.parse(entry.json) as Record<string, unknown>;
  }

  /**
   * Stores a copy of `result` for `cfg.ttlMs`. An entry larger than `cfg.maxBytes` is not stored (and
   * replaces nothing: an older entry under the same key is removed). Expired entries go first, then the
   * least recently used, until both `maxEntries` and `maxBytes` hold.
   */
  set(project: string, key: string, result: Record<string, unknown>, cfg: CacheConfig): void {
    const p = this.project(project);
    const old = p.entries.get(key);
    if (old !== undefined) this.remove(p, key, old);
    const json = JSON.stringify(result);
    const bytes = Buffer.byteLength(json, 'utf8');
    if (bytes > cfg.maxBytes) return;
    const fits = () => p.entries.size < cfg.maxEntries && p.bytes + bytes <= cfg.maxBytes;
    if (!fits()) this.sweep(p);
    for (const [k, e] of p.entries) {
      if (fits()) break;
      this.remove(p, k, e);
    }
    const expiresAt = this.now() + cfg.ttlMs;
    p.entries.set(key, { json, bytes, expiresAt });
    p.bytes += bytes;
    p.soonestExpiry = Math.min(p.soonestExpiry, expiresAt);
  }

  clearProject(project: string): void {
    this.projects.delete(project);
  }

  /** Live (unexpired) entries and their bytes, with hit/miss counts; all projects summed when none given. */
  stats(project?: string): CacheStats {
    const list = project === undefined ? [...this.projects.values()] : [this.projects.get(project)];
    const out: CacheStats = { entries: 0, bytes: 0, hits: 0, misses: 0 };
    for (const p of list) {
      if (p === undefined) continue;
      this.sweep(p);
      out.entries += p.entries.size;
      out.bytes += p.bytes;
      out.hits += p.hits;
      out.misses += p.misses;
    }
    return out;
  }

  private project(project: string): ProjectCache {
    let p = this.projects.get(project);
    if (p === undefined) {
      p = { entries: new Map(), bytes: 0, soonestExpiry: Infinity, hits: 0, misses: 0 };
      this.projects.set(project, p);
    }
    return p;
  }

  private sweep(p: ProjectCache): void {
    const now = this.now();
    if (now < p.soonestExpiry) return;
    let soonest = Infinity;
    for (const [k, e] of p.entries) {
      if (e.expiresAt <= now) this.remove(p, k, e);
      else soonest = Math.min(soonest, e.expiresAt);
    }
    p.soonestExpiry = soonest;
  }

  private remove(p: ProjectCache, key: string, entry: Entry): void {
    p.entries.delete(key);
    p.bytes -= entry.bytes;
  }
}
