/**
 * 2025-era sessions kept in this process only: for an upstream client without a shared store (stdio
 * upstreams, whose sessions live and die with their process). As many as a process keeps live
 * (MAX_LIVE_SESSIONS), least recently used forgotten first: a forgotten session is not ended, and the
 * upstream forgets it at its own pace.
 */
import { LRUCache } from 'lru-cache';
import type { LegacySessionRecord } from '../../../protocol';
import type { Era20251125SessionStore } from './sessions';
import { MAX_LIVE_SESSIONS } from './sessions';

export class MemorySessionStore implements Era20251125SessionStore {
  private readonly sessions: LRUCache<string, { record: LegacySessionRecord; pinnedUntil?: string }>;

  constructor(max = MAX_LIVE_SESSIONS) {
    this.sessions = new LRUCache({ max });
  }

  async get(scope: string): Promise<LegacySessionRecord | undefined> {
    return this.sessions.get(scope)?.record;
  }

  async add(scope: string, record: LegacySessionRecord): Promise<LegacySessionRecord> {
    const current = this.sessions.get(scope);
    if (current) return current.record;
    this.sessions.set(scope, { record });
    return record;
  }

  async remove(scope: string, nonce: string): Promise<void> {
    if (this.sessions.get(scope)?.record.nonce === nonce) this.sessions.delete(scope);
  }

  async pin(scope: string, nonce: string, until: string): Promise<void> {
    const entry = this.sessions.get(scope);
    if (entry?.record.nonce === nonce && (entry.pinnedUntil ?? '') < until) entry.pinnedUntil = until;
  }

  async release(scope: string, nonce: string): Promise<boolean> {
    const entry = this.sessions.get(scope);
    if (entry?.record.nonce !== nonce) return false;
    if (entry.pinnedUntil !== undefined && entry.pinnedUntil >= new Date().toISOString()) return false;
    this.sessions.delete(scope);
    return true;
  }
}
