/**
 * Upstream authorizations made by connecting with OAuth (docs/oauth.md) renew themselves: when one is
 * used within RENEW_MARGIN_MS of its expiry (or after it, while not revoked), its refresh token is
 * exchanged for a new token set through the `renewAuthorization` hook (main/runtime.ts: the token
 * endpoint of the authorization server the client is registered at), and the row is updated in place:
 * same id, so tasks bound to the authorization keep working. A rotated refresh token replaces the old
 * one. A refresh token the server rejects is dropped (the user connects again); a server that cannot be
 * reached leaves everything as it was (the next use tries again).
 *
 * One renewal per authorization at a time in this process, presenting the refresh token as stored when it
 * starts (not as its caller read it); between replicas the write is conditional on the row being
 * unchanged, and the loser reads the winner's tokens, also when the server refused its rotated token.
 */
import type { UpstreamAuthorizationsTable } from '../schema';
import type { StoreContext } from './context';
export type { RenewAuthorization, RenewedTokens } from './context';

/** Renewal starts this long before the access token expires. */
export const RENEW_MARGIN_MS = 60_000;

type Row = UpstreamAuthorizationsTable;

const renewing = new WeakMap<StoreContext, Map<string, Promise<Row | undefined>>>();

export function refreshAad(row: { id: string; upstream_id: string; user_id: string }): string {
  return `upstream-authorization:${row.id}:${row.upstream_id}:${row.user_id}:refresh`;
}

/** Whether `row` is due for renewal now (it can renew, and expires within the margin or has expired). */
export function renewalDue(ctx: StoreContext, row: Row): boolean {
  if (!ctx.options.renewAuthorization || !row.refresh_token || !row.oauth_client_id) return false;
  if (row.revoked_at !== null || row.expires_at === null) return false;
  return new Date(row.expires_at).getTime() - RENEW_MARGIN_MS <= new Date(ctx.nowIso()).getTime();
}

/** When a renewable row should next be looked at again (its renewal time), else its expiry. */
export function validUntil(row: Row): string | null {
  if (!row.refresh_token || row.expires_at === null) return row.expires_at;
  return new Date(new Date(row.expires_at).getTime() - RENEW_MARGIN_MS).toISOString();
}

/** The renewed row, or undefined when it could not be renewed (use what there is). */
export function renewAuthorization(ctx: StoreContext, row: Row): Promise<Row | undefined> {
  let inFlight = renewing.get(ctx);
  if (!inFlight) renewing.set(ctx, (inFlight = new Map()));
  const running = inFlight.get(row.id);
  if (running) return running;
  const map = inFlight;
  const work = renew(ctx, row).finally(() => map.delete(row.id));
  map.set(row.id, work);
  return work;
}

async function renew(ctx: StoreContext, read: Row): Promise<Row | undefined> {
  const hook = ctx.options.renewAuthorization;
  if (!hook) return undefined;
  // The row as it is now, not as the caller read it: a renewal that ended between that read and this
  // one (here or on another replica) rotated the refresh token, and presenting the old one is refused
  // (an authorization server may even revoke the grant on its reuse). No longer due (renewed or revoked
  // meanwhile): that is the row.
  const row = await ctx.db
    .selectFrom('upstream_authorizations')
    .selectAll()
    .where('id', '=', read.id)
    .executeTakeFirst();
  if (!row) return undefined;
  if (!renewalDue(ctx, row)) return row;
  if (!row.refresh_token || !row.oauth_client_id) return undefined;
  const refreshToken = ctx.cipher.open(row.refresh_token, refreshAad(row)).toString('utf8');
  const upstream = await ctx.db
    .selectFrom('upstreams')
    .select('address_approved')
    .where('id', '=', row.upstream_id)
    .executeTakeFirst();
  const renewed = await hook({
    clientId: row.oauth_client_id,
    resource: row.oauth_resource ?? null,
    refreshToken,
    addressApproved: Number(upstream?.address_approved ?? 0) === 1,
  });
  if (renewed === undefined) return undefined;
  const now = ctx.nowIso();
  const patch =
    renewed === 'rejected'
      ? { refresh_token: null, updated_at: now }
      : {
          credential: ctx.cipher.seal(
            Buffer.from(renewed.accessToken, 'utf8'),
            `upstream-authorization:${row.id}:${row.upstream_id}:${row.user_id}`,
          ),
          refresh_token: ctx.cipher.seal(
            Buffer.from(renewed.refreshToken ?? refreshToken, 'utf8'),
            refreshAad(row),
          ),
          expires_at: renewed.expiresAt === undefined ? null : new Date(renewed.expiresAt).toISOString(),
          updated_at: now,
        };
  await ctx.transaction(async (trx) => {
    await trx
      .updateTable('upstream_authorizations')
      .set(patch)
      .where('id', '=', row.id)
      .where('updated_at', '=', row.updated_at)
      .where('revoked_at', 'is', null)
      .execute();
  });
  // Ours, or another replica's renewal that won: either way the row as it is now.
  const fresh = await ctx.db
    .selectFrom('upstream_authorizations')
    .selectAll()
    .where('id', '=', row.id)
    .executeTakeFirst();
  // Refused, yet the row still has a refresh token: our refusal was not written because another
  // replica's renewal of the same token won the race (and rotated it); its row is the answer.
  if (renewed === 'rejected') return fresh?.refresh_token ? fresh : undefined;
  return fresh;
}

/** Records what renewal needs on an authorization just made by connecting. */
export async function attachRenewal(
  ctx: StoreContext,
  authorizationId: string,
  r: { refreshToken: string; clientId: string; resource: string },
): Promise<void> {
  const row = await ctx.db
    .selectFrom('upstream_authorizations')
    .select(['id', 'upstream_id', 'user_id'])
    .where('id', '=', authorizationId)
    .executeTakeFirstOrThrow();
  await ctx.transaction(async (trx) => {
    await trx
      .updateTable('upstream_authorizations')
      .set({
        refresh_token: ctx.cipher.seal(Buffer.from(r.refreshToken, 'utf8'), refreshAad(row)),
        oauth_client_id: r.clientId,
        oauth_resource: r.resource,
      })
      .where('id', '=', authorizationId)
      // Revoked meanwhile (its upstream re-pointed, say): nothing may renew it.
      .where('revoked_at', 'is', null)
      .execute();
  });
}
