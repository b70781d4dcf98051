/**
 * Ended 2025-era client sessions (`DELETE` on the MCP endpoint). A session is a sealed token any replica
 * can open (src/api/mcp/legacy/session.ts); ending one must hold on every replica, so its nonce is kept
 * here until the token's own expiry, after which the token is refused anyway and the row can go.
 */
import type { Kysely } from 'kysely';
import type { Cipher } from '../cipher';
import type { Database } from '../schema';

export class McpSessionStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async end(nonce: string, expiresAt: number): Promise<void> {
    await this.db
      .insertInto('ended_mcp_sessions')
      .values({ nonce, expires_at: new Date(expiresAt).toISOString() })
      .onConflict((oc) => oc.column('nonce').doNothing())
      .execute();
    // Ending a session is rare; tidying up then keeps the table at the size of the live ended sessions.
    await this.db
      .deleteFrom('ended_mcp_sessions')
      .where('expires_at', '<=', this.now().toISOString())
      .execute();
  }

  async isEnded(nonce: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('ended_mcp_sessions')
      .select('nonce')
      .where('nonce', '=', nonce)
      .executeTakeFirst();
    return row !== undefined;
  }
}

/**
 * Answers a 2025-era client POSTs to the requests the gateway sent it during a call (MRTR bridged to the
 * era's server-to-client requests). The answer may reach any replica; the one holding the call waits for
 * it here. Stored encrypted (an answer is user input), read once, and never kept past `maxAgeMs`.
 */
export class McpClientAnswerStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly cipher: Cipher,
    private readonly maxAgeMs: number,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async put(id: string, answer: unknown): Promise<void> {
    await this.db
      .insertInto('mcp_client_answers')
      .values({ id, created_at: this.now().toISOString(), ciphertext: this.cipher.sealJson(answer, aad(id)) })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
  }

  /** The answers stored under these ids so far, removed as they are taken. */
  async take(ids: readonly string[]): Promise<Map<string, unknown>> {
    const found = new Map<string, unknown>();
    if (ids.length === 0) return found;
    const rows = await this.db
      .selectFrom('mcp_client_answers')
      .select(['id', 'ciphertext'])
      .where('id', 'in', ids)
      .execute();
    for (const row of rows) found.set(row.id, this.cipher.openJson(row.ciphertext, aad(row.id)));
    if (rows.length > 0) {
      await this.db
        .deleteFrom('mcp_client_answers')
        .where(
          'id',
          'in',
          rows.map((r) => r.id),
        )
        .execute();
    }
    return found;
  }

  /** Drops answers nobody collected (the call ended first). */
  async purgeStale(): Promise<void> {
    const cutoff = new Date(this.now().getTime() - this.maxAgeMs).toISOString();
    await this.db.deleteFrom('mcp_client_answers').where('created_at', '<', cutoff).execute();
  }
}

function aad(id: string): string {
  return `mcp-client-answer:${id}`;
}
