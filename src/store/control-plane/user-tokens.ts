/**
 * Personal access tokens (`trp_…`): how users authenticate to the MCP endpoint, the admin API and the
 * dashboard. A token is shown once when issued; only its hash is stored. Users issue, list and revoke
 * their own tokens (the administrator anyone's); a token may expire, and an expired or revoked token
 * no longer authenticates. Another user's token id is reported as unknown, never as forbidden.
 */
import { z } from 'zod';
import { digestsEqual, hashToken, mintToken, tokenHint, USER_TOKEN_PREFIX } from './tokens';
import { requireAdmin, requireSelfOrAdmin, requireUserRow } from './access';
import { auditBy } from './audit';
import type { StoreContext } from './context';
import { insertUnique, newId } from './context';
import { ControlPlaneError } from './errors';
import { FutureTimestampSchema, NameSchema, parse } from './schemas';
import { alreadyStored, requireWellFormed, revokeOnce } from './secrets';
import type { Principal } from './types';
import type { TokenView, Updated } from './views';

/**
 * A valid (unrevoked, unexpired) personal access token: whose it is, which token, and until when. The
 * dashboard binds its sessions to the token this returns.
 */
export async function userToken(
  ctx: StoreContext,
  token: string,
): Promise<{ userId: string; tokenId: string; expiresAt: string | null } | undefined> {
  if (token.length > 512 || !token.startsWith(USER_TOKEN_PREFIX)) return undefined;
  const hash = hashToken(token);
  const row = await ctx.db
    .selectFrom('user_tokens')
    .innerJoin('users', 'users.id', 'user_tokens.user_id')
    .select(['user_tokens.id', 'user_tokens.user_id', 'user_tokens.token_hash', 'user_tokens.expires_at'])
    .where('user_tokens.token_hash', '=', hash)
    .where('user_tokens.revoked_at', 'is', null)
    .executeTakeFirst();
  if (!row || !digestsEqual(row.token_hash, hash)) return undefined;
  if (row.expires_at !== null && row.expires_at <= ctx.nowIso()) return undefined;
  return { userId: row.user_id, tokenId: row.id, expiresAt: row.expires_at };
}

/** A new personal access token, returned once in `token`; only its hash is stored. */
export async function issueUserToken(
  ctx: StoreContext,
  actor: Principal,
  userRef: string,
  input: { name: string; expiresAt?: string },
): Promise<{ token: string; record: TokenView }> {
  const { name, expiresAt } = parse(
    z.strictObject({ name: NameSchema, expiresAt: FutureTimestampSchema.optional() }),
    input,
  );
  const user = await requireUserRow(ctx.db, userRef);
  requireSelfOrAdmin(actor, user.id);
  const expires = expiresAt === undefined ? null : ctx.futureIso(expiresAt);
  const token = mintToken(USER_TOKEN_PREFIX);
  const record = await insertUserToken(ctx, actor, user.id, name, token, expires);
  return { token, record };
}

/**
 * Admin only (bootstrap): makes sure a token chosen in advance exists for the user. Idempotent; a
 * token already stored for another user or revoked is a conflict rather than silently reused.
 */
export async function ensureUserToken(
  ctx: StoreContext,
  actor: Principal,
  userRef: string,
  input: { name: string; token: string },
): Promise<Updated<TokenView>> {
  requireAdmin(actor);
  const { name, token } = parse(z.strictObject({ name: NameSchema, token: z.string() }), input);
  requireWellFormed(token, USER_TOKEN_PREFIX, `Token "${name}"`);
  const user = await requireUserRow(ctx.db, userRef);
  const existing = await ctx.db
    .selectFrom('user_tokens')
    .selectAll()
    .where('token_hash', '=', hashToken(token))
    .executeTakeFirst();
  if (existing) return alreadyStored(existing.user_id === user.id, `Token "${name}"`, toTokenView(existing));
  return { record: await insertUserToken(ctx, actor, user.id, name, token, null), changed: true };
}

export async function listUserTokens(
  ctx: StoreContext,
  actor: Principal,
  userRef: string,
): Promise<TokenView[]> {
  const user = await requireUserRow(ctx.db, userRef);
  requireSelfOrAdmin(actor, user.id);
  const rows = await ctx.db
    .selectFrom('user_tokens')
    .selectAll()
    .where('user_id', '=', user.id)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toTokenView);
}

export async function revokeToken(ctx: StoreContext, actor: Principal, tokenId: string): Promise<TokenView> {
  const row = await ctx.db.selectFrom('user_tokens').selectAll().where('id', '=', tokenId).executeTakeFirst();
  // Another user's token id is reported as unknown rather than forbidden: ids are not disclosed.
  const own = actor.kind === 'admin' || (actor.kind === 'user' && actor.userId === row?.user_id);
  if (!row || !own) throw new ControlPlaneError('not_found', `No token "${tokenId}"`);
  const revoked = await revokeOnce(ctx, 'user_tokens', row, (trx) =>
    auditBy(ctx, trx, actor, null, 'user.token_revoked', { tokenId: row.id, userId: row.user_id }),
  );
  return toTokenView(revoked);
}

async function insertUserToken(
  ctx: StoreContext,
  actor: Principal,
  userId: string,
  name: string,
  token: string,
  expiresAt: string | null,
): Promise<TokenView> {
  const row = {
    id: newId('tok'),
    user_id: userId,
    name,
    token_hash: hashToken(token),
    hint: tokenHint(token),
    created_at: ctx.nowIso(),
    expires_at: expiresAt,
    revoked_at: null,
  };
  await ctx.transaction(async (trx) => {
    await insertUnique(trx.insertInto('user_tokens').values(row), 'Token already exists');
    await auditBy(ctx, trx, actor, null, 'user.token_issued', { tokenId: row.id, userId, name, expiresAt });
  });
  return toTokenView(row);
}

function toTokenView(row: {
  id: string;
  user_id: string;
  name: string;
  hint: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
}): TokenView {
  return {
    id: row.id,
    userId: row.user_id,
    name: row.name,
    hint: row.hint,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
  };
}
