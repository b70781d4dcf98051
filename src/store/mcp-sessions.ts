/**
 * Ended 2025-era client sessions (`DELETE` on the MCP endpoint). A session is a sealed token any replica
 * can open (src/api/mcp/legacy/session.ts); ending one must hold on every replica, so its nonce is kept
 * here until the token's own expiry, after which the token is refused anyway and the row can go.
 */
import type { Kysely } from 'kysely';
import type { Database } from './schema';

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
