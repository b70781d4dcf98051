/**
 * Per-user upstream authorizations: the token a user granted for a `per_user` upstream, as an OAuth
 * flow would leave it, sealed with the store cipher and bound to its id, upstream and user. A user has
 * at most one active authorization per upstream: a grant while one is active refreshes it in place
 * (same id, so tasks bound to it keep working); after revocation or expiry a grant creates a new one.
 * Users grant and revoke for themselves (to grant they must be able to call the project); the admin
 * may grant on behalf of a user, and project managers may revoke anyone's. Refusals are audited.
 */
import { z } from 'zod';
import type { UpstreamAuthorizationsTable } from '../schema';
import { LIST_KINDS } from '../sessions/upstream-events';
import {
  canCallProject,
  canManageProject,
  forbidden,
  isTeamMemberOrDirect,
  requireProjectRow,
  requireUserRow,
} from './access';
import { auditBy } from './audit';
import type { Db, StoreContext } from './context';
import { newId } from './context';
import { ControlPlaneError } from './errors';
import { announceListChanges } from './list-changes';
import { toProjectRecord } from './projects';
import { CredentialSchema, FutureTimestampSchema, parse } from './schemas';
import type { Principal } from './types';
import { refreshAad } from './renewal';
import { addressOf } from './upstream-addresses';
import { requireUpstreamRow } from './upstreams';
import type { AuthorizationView } from './views';

/** Records the token a user granted for a `per_user` upstream; `user`: the admin grants on their behalf. */
export async function grantUpstreamAuthorization(
  ctx: StoreContext,
  actor: Principal,
  projectRef: string,
  alias: string,
  input: { credential: string; expiresAt?: string; user?: string },
  opts: { forAddress?: string } = {},
): Promise<AuthorizationView> {
  const g = parse(
    z.strictObject({
      credential: CredentialSchema,
      expiresAt: FutureTimestampSchema.optional(),
      user: z.string().min(1).optional(),
    }),
    input,
  );
  const { project, row, user } = await authorizationTarget(ctx, actor, projectRef, alias, g.user, 'grant');
  if (row.auth_mode !== 'per_user') {
    throw new ControlPlaneError('invalid', `Upstream "${row.alias}" does not use per-user authorization`);
  }
  const expiresAt = g.expiresAt === undefined ? null : ctx.futureIso(g.expiresAt);
  const now = ctx.nowIso();
  return ctx.transaction(async (trx) => {
    if (opts.forAddress !== undefined) {
      // Read in the grant's transaction: a re-pointing committed meanwhile must not receive this token.
      const current = await trx
        .selectFrom('upstreams')
        .select('url')
        .where('id', '=', row.id)
        .executeTakeFirst();
      if (!current || addressOf(current.url) !== opts.forAddress) {
        throw new ControlPlaneError('conflict', `Upstream "${row.alias}" was re-pointed; connect it again`);
      }
    }
    const active = await findAuthorization(trx, row.id, user.id, now, 'active');
    const id = active?.id ?? newId('uauth');
    const sealed = ctx.cipher.seal(Buffer.from(g.credential, 'utf8'), authorizationAad(id, row.id, user.id));
    if (active) {
      await trx
        .updateTable('upstream_authorizations')
        // A token granted by hand does not renew: what renewal knew belonged to the old one.
        .set({
          credential: sealed,
          expires_at: expiresAt,
          updated_at: now,
          refresh_token: null,
          oauth_client_id: null,
          oauth_resource: null,
          renewing_until: null,
        })
        .where('id', '=', id)
        .execute();
    } else {
      await trx
        .insertInto('upstream_authorizations')
        .values({
          id,
          upstream_id: row.id,
          user_id: user.id,
          credential: sealed,
          created_at: now,
          updated_at: now,
          expires_at: expiresAt,
          revoked_at: null,
        })
        .execute();
    }
    await auditBy(ctx, trx, actor, project.id, active ? 'authorization.refreshed' : 'authorization.granted', {
      authorizationId: id,
      upstreamId: row.id,
      alias: row.alias,
      userId: user.id,
      expiresAt,
    });
    // A new authorization makes the upstream visible to the user (a refreshed one changes nothing seen).
    if (!active && Number(row.enabled) !== 0)
      await announceListChanges(trx, {
        projectId: project.id,
        upstreamId: row.id,
        userId: user.id,
        kinds: LIST_KINDS,
      });
    return toAuthorizationView(
      {
        id,
        upstream_id: row.id,
        user_id: user.id,
        created_at: active?.created_at ?? now,
        updated_at: now,
        expires_at: expiresAt,
        revoked_at: null,
      },
      row,
      now,
    );
  });
}

/** Revokes a user's active authorization: their own, or (admin, project managers) `user`'s. */
export async function revokeUpstreamAuthorization(
  ctx: StoreContext,
  actor: Principal,
  projectRef: string,
  alias: string,
  input: { user?: string } = {},
): Promise<AuthorizationView> {
  const { user: userRef } = parse(z.strictObject({ user: z.string().min(1).optional() }), input);
  const { project, row, user } = await authorizationTarget(ctx, actor, projectRef, alias, userRef, 'revoke');
  const now = ctx.nowIso();
  const revoked = await ctx.transaction(async (trx) => {
    const active = await findAuthorization(trx, row.id, user.id, now, 'revocable');
    if (!active) {
      throw new ControlPlaneError(
        'not_found',
        `User "${user.handle}" has no active authorization for upstream "${row.alias}"`,
      );
    }
    // The refresh token goes with the connection: nothing here can renew it any more.
    await trx
      .updateTable('upstream_authorizations')
      .set({ revoked_at: now, refresh_token: null })
      .where('id', '=', active.id)
      .execute();
    await auditBy(ctx, trx, actor, project.id, 'authorization.revoked', {
      authorizationId: active.id,
      upstreamId: row.id,
      alias: row.alias,
      userId: user.id,
    });
    if (Number(row.enabled) !== 0)
      await announceListChanges(trx, {
        projectId: project.id,
        upstreamId: row.id,
        userId: user.id,
        kinds: LIST_KINDS,
      });
    return active;
  });
  await revokeAtServer(ctx, revoked, Number(row.address_approved ?? 0) === 1);
  return toAuthorizationView({ ...revoked, revoked_at: now, refresh_token: null }, row, now);
}

/**
 * A connection made with OAuth is also revoked at the authorization server that issued its tokens
 * (RFC 7009), once it is revoked here: best effort, so a server that fails or cannot be reached leaves
 * the local revocation standing (the hook logs it, without the tokens).
 */
async function revokeAtServer(
  ctx: StoreContext,
  a: UpstreamAuthorizationsTable,
  addressApproved: boolean,
): Promise<void> {
  const hook = ctx.options.revokeAtServer;
  if (!hook || !a.oauth_client_id) return;
  await hook({
    clientId: a.oauth_client_id,
    accessToken: openAuthorization(ctx, a),
    refreshToken: a.refresh_token ? ctx.cipher.open(a.refresh_token, refreshAad(a)).toString('utf8') : null,
    addressApproved,
  }).catch(() => undefined);
}

/** Managers see every user's authorizations for the project; other users see their own. */
export async function listUpstreamAuthorizations(
  ctx: StoreContext,
  actor: Principal,
  projectRef: string,
): Promise<AuthorizationView[]> {
  const project = await requireProjectRow(ctx.db, projectRef);
  const record = await toProjectRecord(ctx.db, project);
  const manages = await canManageProject(ctx, actor, record);
  if (!manages && !(actor.kind === 'user' && (await canCallProject(ctx, actor, record)))) {
    throw await forbidden(ctx, actor, project.id, 'authorization.list');
  }
  let q = ctx.db
    .selectFrom('upstream_authorizations')
    .innerJoin('upstreams', 'upstreams.id', 'upstream_authorizations.upstream_id')
    .selectAll('upstream_authorizations')
    .select(['upstreams.alias', 'upstreams.project_id'])
    .where('upstreams.project_id', '=', project.id)
    .orderBy('upstream_authorizations.created_at')
    .orderBy('upstream_authorizations.id');
  if (!manages && actor.kind === 'user') q = q.where('upstream_authorizations.user_id', '=', actor.userId);
  const now = ctx.nowIso();
  return (await q.execute()).map((r) => toAuthorizationView(r, r, now));
}

/** The project, upstream and user a grant or revocation is about, once `actor` may do it. */
async function authorizationTarget(
  ctx: StoreContext,
  actor: Principal,
  projectRef: string,
  alias: string,
  userRef: string | undefined,
  op: 'grant' | 'revoke',
) {
  const project = await requireProjectRow(ctx.db, projectRef);
  const record = await toProjectRecord(ctx.db, project);
  let user;
  if (userRef === undefined) {
    if (actor.kind !== 'user')
      throw new ControlPlaneError('invalid', 'Name the user the authorization is for');
    user = await requireUserRow(ctx.db, actor.userId);
  } else {
    user = await requireUserRow(ctx.db, userRef);
  }
  const self = actor.kind === 'user' && actor.userId === user.id;
  if (!self) {
    // On behalf of someone else: the admin may grant and revoke; project managers may only revoke.
    const allowed =
      actor.kind === 'admin' || (op === 'revoke' && (await canManageProject(ctx, actor, record)));
    if (!allowed) throw await forbidden(ctx, actor, project.id, `authorization.${op}`);
  }
  if (op === 'grant' && !(await isTeamMemberOrDirect(ctx.db, user.id, record))) {
    throw new ControlPlaneError('forbidden', `User "${user.handle}" may not call project "${project.slug}"`);
  }
  const row = await requireUpstreamRow(ctx, project, alias);
  return { project, row, user };
}

/**
 * The user's authorization for the upstream that a grant replaces (`active`) or a revocation ends
 * (`revocable`), read in the caller's transaction. Revocable is the active one, or else one whose access
 * token expired but which still holds a refresh token: that one is shown as connected (it renews on its
 * next use) and its refresh token is a live grant at the authorization server, so it must be revocable too.
 */
async function findAuthorization(
  trx: Db,
  upstreamId: string,
  userId: string,
  now: string,
  what: 'active' | 'revocable',
): Promise<UpstreamAuthorizationsTable | undefined> {
  const unrevoked = await trx
    .selectFrom('upstream_authorizations')
    .selectAll()
    .where('upstream_id', '=', upstreamId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .execute();
  const active = unrevoked.find((a) => authorizationStatus(a, now) === 'active');
  if (what === 'active') return active;
  return active ?? unrevoked.find((a) => a.refresh_token !== null);
}

/** The token an authorization holds. */
export function openAuthorization(ctx: StoreContext, a: UpstreamAuthorizationsTable): string {
  return ctx.cipher.open(a.credential, authorizationAad(a.id, a.upstream_id, a.user_id)).toString('utf8');
}

/** Binds a sealed token to its authorization, upstream and user: moved to another row, it does not open. */
function authorizationAad(id: string, upstreamId: string, userId: string): string {
  return `upstream-authorization:${id}:${upstreamId}:${userId}`;
}

export function authorizationStatus(
  a: { revoked_at: string | null; expires_at: string | null },
  nowIso: string,
): AuthorizationView['status'] {
  if (a.revoked_at !== null) return 'revoked';
  if (a.expires_at !== null && a.expires_at <= nowIso) return 'expired';
  return 'active';
}

function toAuthorizationView(
  a: {
    id: string;
    upstream_id: string;
    user_id: string;
    created_at: string;
    updated_at: string;
    expires_at: string | null;
    revoked_at: string | null;
    refresh_token?: Uint8Array | null;
  },
  upstream: { alias: string; project_id: string },
  nowIso: string,
): AuthorizationView {
  return {
    id: a.id,
    upstreamId: a.upstream_id,
    upstreamAlias: upstream.alias,
    projectId: upstream.project_id,
    userId: a.user_id,
    status: authorizationStatus(a, nowIso),
    createdAt: a.created_at,
    updatedAt: a.updated_at,
    expiresAt: a.expires_at,
    revokedAt: a.revoked_at,
    renewable: a.revoked_at === null && a.refresh_token != null,
  };
}
