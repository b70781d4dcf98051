/**
 * Sessions with stateful 2025-era upstreams (src/upstream/eras/2025-11-25/sessions.ts), one per upstream, credential
 * scope and variant, shared by every API replica and worker: whoever initializes first stores the session,
 * everyone else reuses it. The state (the upstream's `Mcp-Session-Id`, a credential in effect, and its
 * `initialize` result) is sealed with associated data naming the scope and nonce, so a row copied to
 * another scope does not open. A session replaced after the upstream forgot it is removed only if it is
 * still the one that failed (nonce), so concurrent replacements agree on one successor.
 */
import type { Kysely } from 'kysely';
import type { LegacySessionRecord } from '../../protocol';
import type { Cipher } from '../cipher';
import type { Database, UpstreamSessionsTable } from '../schema';

type SealedState = Pick<LegacySessionRecord, 'sessionId' | 'initialize'>;

export class UpstreamSessionStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly cipher: Cipher,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async get(scope: string): Promise<LegacySessionRecord | undefined> {
    const row = await this.db
      .selectFrom('upstream_sessions')
      .selectAll()
      .where('scope', '=', scope)
      .executeTakeFirst();
    return row && this.open(row);
  }

  /** Stores `record` unless the scope has a session already; answers the scope's session now. */
  async add(scope: string, record: LegacySessionRecord): Promise<LegacySessionRecord> {
    const state: SealedState = { sessionId: record.sessionId, initialize: record.initialize };
    await this.db
      .insertInto('upstream_sessions')
      .values({
        scope,
        upstream_id: record.upstreamId,
        nonce: record.nonce,
        url: record.url,
        protocol_version: record.protocolVersion,
        state: this.cipher.sealJson(state, aad(scope, record.nonce)),
        created_at: this.now().toISOString(),
        pinned_until: null,
      })
      .onConflict((oc) => oc.column('scope').doNothing())
      .execute();
    return (await this.get(scope)) ?? record;
  }

  /** Forgets the scope's session if it is still this one. */
  async remove(scope: string, nonce: string): Promise<void> {
    await this.db
      .deleteFrom('upstream_sessions')
      .where('scope', '=', scope)
      .where('nonce', '=', nonce)
      .execute();
  }

  /** Keeps the session from being ended at shutdown before `until` (the latest pin wins). */
  async pin(scope: string, nonce: string, until: string): Promise<void> {
    await this.db
      .updateTable('upstream_sessions')
      .set({ pinned_until: until })
      .where('scope', '=', scope)
      .where('nonce', '=', nonce)
      .where((eb) => eb.or([eb('pinned_until', 'is', null), eb('pinned_until', '<', until)]))
      .execute();
  }

  /** Forgets the session if it is still this one and not pinned; true when it did (the caller ends it). */
  async release(scope: string, nonce: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('upstream_sessions')
      .where('scope', '=', scope)
      .where('nonce', '=', nonce)
      .where((eb) =>
        eb.or([eb('pinned_until', 'is', null), eb('pinned_until', '<', this.now().toISOString())]),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  private open(row: UpstreamSessionsTable): LegacySessionRecord {
    const state = this.cipher.openJson<SealedState>(row.state, aad(row.scope, row.nonce));
    return {
      nonce: row.nonce,
      url: row.url,
      upstreamId: row.upstream_id,
      protocolVersion: row.protocol_version,
      ...state,
    };
  }
}

function aad(scope: string, nonce: string): string {
  return `upstream-session:${scope}:${nonce}`;
}
