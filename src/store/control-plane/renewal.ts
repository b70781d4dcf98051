/**
 * Upstream authorizations made by connecting with OAuth (docs/oauth.md) renew themselves: when one is
 * used within RENEW_MARGIN_MS of its expiry (or after it, while not revoked), its refresh token is
 * exchanged for a new token set through the `renewAuthorization` hook (main/runtime.ts: the token
 * endpoint of the authorization server the client is registered at), and the row is updated in place:
 * same id, so tasks bound to the authorization keep working. A rotated refresh token replaces the old
 * one. A refresh token the server rejects is dropped (the user connects again); a server that cannot be
 * reached leaves everything as it was (the next use tries again).
 *
 * One renewal per authorization at a time: in this process by a shared promise, between replicas by a
 * lease on the row (`renewing_until`): the replica that takes it presents the refresh token as stored
 * when it starts (not as its caller read it), the others read the row until its renewal is written. An
 * authorization server may end the whole grant when one refresh token is presented twice, so two replicas
 * must not both present it. The write is still conditional on the row being unchanged, and a replica
 * whose token was refused reads the row, in case another's renewal won (a lease that ran out).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { UpstreamAuthorizationsTable } from '../schema';
import type { StoreContext } from './context';
export type { RenewAuthorization, RenewedTokens } from './context';

/** Renewal starts this long before the access token expires. */
export const RENEW_MARGIN_MS = 60_000;

/**
 * How long one replica's renewal may hold the lease: the renewal hook's requests (up to three metadata
 * lookups, then the token request) give up after 10 s each. A replica that died holding it delays the
 * others by at most this; a waiting caller gives up after twice this.
 */
export const RENEWAL_LEASE_MS = 60_000;
/** How often a replica waiting for another's renewal reads the row. */
const LEASE_WAIT_MS = 50;

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

function readRow(ctx: StoreContext, id: string): Promise<Row | undefined> {
  return ctx.db.selectFrom('upstream_authorizations').selectAll().where('id', '=', id).executeTakeFirst();
}

async function renew(
  ctx: StoreContext,
  read: Row,
  giveUpAt = Date.now() + 2 * RENEWAL_LEASE_MS,
): Promise<Row | undefined> {
  const hook = ctx.options.renewAuthorization;
  if (!hook) return undefined;
  // The row as it is now, not as the caller read it: a renewal that ended between that read and this
  // one (here or on another replica) rotated the refresh token, and presenting the old one is refused
  // (an authorization server may even revoke the grant on its reuse). No longer due (renewed or revoked
  // meanwhile): that is the row.
  const row = await readRow(ctx, read.id);
  if (!row) return undefined;
  if (!renewalDue(ctx, row)) return row;
  if (!row.refresh_token || !row.oauth_client_id) return undefined;
  // Opened before the lease is taken: a token that cannot be opened holds up no one.
  const refreshToken = ctx.cipher.open(row.refresh_token, refreshAad(row)).toString('utf8');
  const lease = await takeLease(ctx, row);
  if (lease === undefined) return awaitRenewal(ctx, row, giveUpAt);
  try {
    return await present(ctx, row, { clientId: row.oauth_client_id, refreshToken }, hook);
  } finally {
    // Whatever happened (written, unreachable, thrown): the lease is let go if it is still ours. After a
    // written renewal it is already gone and this matches nothing.
    await ctx.db
      .updateTable('upstream_authorizations')
      .set({ renewing_until: null })
      .where('id', '=', row.id)
      .where('renewing_until', '=', lease)
      .execute();
  }
}

/** Presents the refresh token (the lease is held) and stores what the server answered. */
async function present(
  ctx: StoreContext,
  row: Row,
  { clientId, refreshToken }: { clientId: string; refreshToken: string },
  hook: NonNullable<StoreContext['options']['renewAuthorization']>,
): Promise<Row | undefined> {
  const upstream = await ctx.db
    .selectFrom('upstreams')
    .select('address_approved')
    .where('id', '=', row.upstream_id)
    .executeTakeFirst();
  const renewed = await hook({
    clientId,
    resource: row.oauth_resource ?? null,
    refreshToken,
    addressApproved: Number(upstream?.address_approved ?? 0) === 1,
  });
  // The server could not be reached: the next use tries again, here or on another replica.
  if (renewed === undefined) return undefined;
  const now = ctx.nowIso();
  const patch =
    renewed === 'rejected'
      ? { refresh_token: null, updated_at: now, renewing_until: null }
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
          renewing_until: null,
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
  const fresh = await readRow(ctx, row.id);
  // Refused, yet the row still has a refresh token: our refusal was not written because another
  // replica's renewal of the same token won the race (and rotated it); its row is the answer.
  if (renewed === 'rejected') return fresh?.refresh_token ? fresh : undefined;
  return fresh;
}

/**
 * Takes the row's renewal lease if no replica holds it and the row is as read: the lease's end (this
 * replica's mark on the row), or undefined when another replica holds it.
 */
async function takeLease(ctx: StoreContext, row: Row): Promise<string | undefined> {
  const now = ctx.nowIso();
  const until = new Date(new Date(now).getTime() + RENEWAL_LEASE_MS).toISOString();
  const taken = await ctx.db
    .updateTable('upstream_authorizations')
    .set({ renewing_until: until })
    .where('id', '=', row.id)
    .where('updated_at', '=', row.updated_at)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('renewing_until', 'is', null), eb('renewing_until', '<=', now)]))
    .executeTakeFirst();
  return Number(taken.numUpdatedRows) === 1 ? until : undefined;
}

/**
 * Another replica holds the lease: the row once its renewal is written (or the row changed otherwise);
 * undefined when that replica let go without a change (the server could not be reached, or it failed), or
 * at `giveUpAt`. A lease that ran out (its replica died) is taken over.
 */
async function awaitRenewal(ctx: StoreContext, row: Row, giveUpAt: number): Promise<Row | undefined> {
  while (Date.now() < giveUpAt) {
    await sleep(LEASE_WAIT_MS);
    const now = await readRow(ctx, row.id);
    if (!now || now.updated_at !== row.updated_at || !renewalDue(ctx, now)) return now;
    if (now.renewing_until === null || now.renewing_until === undefined) return undefined;
    if (now.renewing_until <= ctx.nowIso()) return renew(ctx, now, giveUpAt);
  }
  return undefined;
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
        renewing_until: null,
      })
      .where('id', '=', authorizationId)
      // Revoked meanwhile (its upstream re-pointed, say): nothing may renew it.
      .where('revoked_at', 'is', null)
      .execute();
  });
}
