/**
 * What of an upstream task's metadata the gateway re-publishes. Standard result `_meta` and extension
 * fields are kept (clients and extensions rely on them) within bounds, so a misbehaving upstream cannot
 * bloat every tasks/get; anything beyond the bounds is dropped and the drop is noted. Pure.
 */
import type { Meta } from '../protocol';
import { META, TASK_ID_PLACEHOLDER } from '../protocol';

export const META_BOUNDS = {
  /** Keys kept from `_meta` and from extension fields, each. */
  maxKeys: 32,
  /** Longest key kept. */
  maxKeyLength: 128,
  /** Largest JSON size of `_meta` plus extension fields together, in bytes. */
  maxBytes: 16 * 1024,
} as const;

/** Gateway-owned `_meta` key noting what was dropped. */
export const DROPPED_META_KEY = 'com.taskrouter/droppedMetadata';

/** Task fields the gateway models itself; everything else at the top level is an extension field. */
const KNOWN_FIELDS = new Set([
  'taskId',
  'status',
  'statusMessage',
  'createdAt',
  'lastUpdatedAt',
  'ttlMs',
  'pollIntervalMs',
  'resultType',
  'inputRequests',
  'result',
  'error',
  'requestState',
  '_meta',
]);

/** `_meta` keys that describe the upstream hop, not the task: the gateway stamps its own or none. */
const HOP_META = new Set<string>([META.serverInfo, META.legacyRelatedTask, META.subscriptionId]);

export interface TaskMetadata {
  meta?: Meta;
  extensions?: Record<string, unknown>;
}

export function taskMetadata(upstreamTask: Record<string, unknown>): TaskMetadata {
  const rawMeta = (upstreamTask._meta ?? {}) as Record<string, unknown>;
  const metaEntries = Object.entries(typeof rawMeta === 'object' && rawMeta !== null ? rawMeta : {}).filter(
    ([k]) => !HOP_META.has(k),
  );
  const extEntries = Object.entries(upstreamTask).filter(([k]) => !KNOWN_FIELDS.has(k));
  let budget = META_BOUNDS.maxBytes;
  let dropped = 0;
  const keep = (entries: Array<[string, unknown]>) => {
    const out: Record<string, unknown> = {};
    let count = 0;
    for (const [k, v] of entries) {
      const size = Buffer.byteLength(JSON.stringify([k, v]) ?? '');
      if (count >= META_BOUNDS.maxKeys || k.length > META_BOUNDS.maxKeyLength || size > budget) {
        dropped++;
        continue;
      }
      budget -= size;
      count++;
      out[k] = v;
    }
    return out;
  };
  const meta: Meta = keep(metaEntries);
  const extensions = keep(extEntries);
  if (dropped > 0) meta[DROPPED_META_KEY] = { droppedKeys: dropped, bounds: META_BOUNDS };
  return {
    ...(Object.keys(meta).length > 0 && { meta }),
    ...(Object.keys(extensions).length > 0 && { extensions }),
  };
}

/** A result without the `_meta` keys that describe the upstream hop (`_meta` dropped if nothing is left). */
export function withoutHopMeta(result: Record<string, unknown>): Record<string, unknown> {
  const meta = result._meta;
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return result;
  const { _meta: _dropped, ...rest } = result;
  const kept = Object.entries(meta).filter(([k]) => !HOP_META.has(k));
  return kept.length > 0 ? { ...rest, _meta: Object.fromEntries(kept) } : rest;
}

/**
 * Replaces every occurrence of the upstream task id in strings (and object keys) with the placeholder
 * the gateway swaps for its own id, so the upstream id never reaches a client, whatever field echoed it.
 */
export function scrubId<T>(value: T, upstreamTaskId: string): T {
  if (upstreamTaskId === '') return value;
  // Run on every poll's answer: what holds no occurrence is returned as it is, not copied.
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      return v.includes(upstreamTaskId) ? v.split(upstreamTaskId).join(TASK_ID_PLACEHOLDER) : v;
    }
    if (Array.isArray(v)) {
      const out = v.map(walk);
      return out.some((x, i) => x !== v[i]) ? out : v;
    }
    if (typeof v === 'object' && v !== null) {
      const entries = Object.entries(v);
      const out = entries.map(([k, x]) => [walk(k) as string, walk(x)] as const);
      return out.some(([k, x], i) => k !== entries[i]![0] || x !== entries[i]![1])
        ? Object.fromEntries(out)
        : v;
    }
    return v;
  };
  return walk(value) as T;
}
