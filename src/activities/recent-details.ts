/**
 * The task details this worker stored a moment ago, by payload id. A creation stores the task's detail
 * (`observe`) and, one local activity later, records the task with that detail (`snapshotOf`); a watch
 * that saw a change stores the new detail and the workflow records it next. Without this each of those
 * read back from the payload store (a query and a decryption) what the same process had just written.
 * Payload ids are never reused, so an entry cannot go stale; a miss (another worker, an evicted entry)
 * reads the store as before. Bounded by size: details can carry large results.
 */
import { LRUCache } from 'lru-cache';
import type { TaskDetail } from './observation';

/** Total of the kept details' JSON lengths (characters). */
const MAX_CHARS = 16 * 1024 * 1024;
/** Longer than any step between storing a detail and recording it. */
const TTL_MS = 60_000;

export class RecentDetails {
  private readonly cache = new LRUCache<string, { detail: TaskDetail; size: number }>({
    maxSize: MAX_CHARS,
    sizeCalculation: (v) => v.size,
    ttl: TTL_MS,
  });

  remember(detailRef: string, detail: TaskDetail): void {
    const size = Math.max(1, JSON.stringify(detail).length);
    // One detail larger than the whole bound is simply not kept.
    if (size <= MAX_CHARS) this.cache.set(detailRef, { detail, size });
  }

  /** The detail (removed: each is read once, by the step that records it), or undefined. */
  take(detailRef: string): TaskDetail | undefined {
    const hit = this.cache.get(detailRef);
    if (hit) this.cache.delete(detailRef);
    return hit?.detail;
  }
}
