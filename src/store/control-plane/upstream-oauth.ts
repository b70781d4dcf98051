/**
 * The OAuth client a `per_user` upstream names for its authorization server (docs/oauth.md): `oauth` on
 * or off, the client id in the clear, the client secret sealed with the store cipher and bound to the
 * upstream (`upstream-oauth-client-secret:{id}`), never returned. Used by upstreams.ts when an upstream
 * is added or changed, and by the connect flow (`upstreamOAuthClient`).
 */
import type { z } from 'zod';
import type { UpstreamsTable } from '../schema';
import type { StoreContext } from './context';
import { patchedClientSecret } from './secrets';
import type { AuthPatchStep, NewUpstreamSchema } from './schemas';
import { tokenExchangeOf } from './token-exchange';
import type { OAuthRegistration, UpstreamAuth } from './types';

/** The OAuth columns of a new upstream (all empty unless it is `per_user` with `oauth`). */
export function oauthColumns(
  ctx: StoreContext,
  id: string,
  auth: z.output<typeof NewUpstreamSchema>['auth'],
) {
  const o = auth.mode === 'per_user' ? auth.oauth : undefined;
  return {
    oauth: o ? 1 : 0,
    oauth_client_id: o?.clientId ?? null,
    oauth_client_secret:
      o?.clientSecret === undefined ? null : sealOAuthClientSecret(ctx, id, o.clientSecret),
  };
}

/**
 * A patch's `auth` replaces the OAuth settings too; an omitted `clientSecret` keeps the stored one while
 * the client id stays the same (like a project credential), and resending the stored one changes nothing.
 */
export const patchOAuth: AuthPatchStep = (ctx, row, next, a, fields) => {
  const o = a.mode === 'per_user' ? a.oauth : undefined;
  const clientId = o?.clientId ?? null;
  const was = { oauth: Number(row.oauth ?? 0), clientId: row.oauth_client_id ?? null };
  if ((o ? 1 : 0) !== was.oauth || clientId !== was.clientId) {
    next.oauth = o ? 1 : 0;
    next.oauth_client_id = clientId;
    next.oauth_registration = null;
    fields.push('oauth');
  }
  const sameClient = clientId !== null && clientId === was.clientId;
  const secret = patchedClientSecret(row.oauth_client_secret ?? null, sameClient, o?.clientSecret, {
    open: (sealed) => openOAuthClientSecret(ctx, row.id, sealed),
    seal: (given) => sealOAuthClientSecret(ctx, row.id, given),
  });
  if (secret !== undefined) {
    next.oauth_client_secret = secret;
    fields.push('oauthClientSecret');
  }
};

/** The client an upstream's configuration names for its authorization server, secret opened; else undefined. */
export async function upstreamOAuthClient(
  ctx: StoreContext,
  upstreamId: string,
): Promise<{ clientId: string; clientSecret?: string } | undefined> {
  const row = await ctx.db
    .selectFrom('upstreams')
    .select(['id', 'oauth_client_id', 'oauth_client_secret'])
    .where('id', '=', upstreamId)
    .executeTakeFirst();
  if (!row?.oauth_client_id) return undefined;
  const sealed = row.oauth_client_secret ?? null;
  return {
    clientId: row.oauth_client_id,
    ...(sealed !== null && { clientSecret: openOAuthClientSecret(ctx, row.id, sealed) }),
  };
}

function openOAuthClientSecret(ctx: StoreContext, upstreamId: string, sealed: Uint8Array): string {
  return ctx.cipher.open(sealed, `upstream-oauth-client-secret:${upstreamId}`).toString('utf8');
}

function sealOAuthClientSecret(ctx: StoreContext, upstreamId: string, secret: string): Buffer {
  return ctx.cipher.seal(Buffer.from(secret, 'utf8'), `upstream-oauth-client-secret:${upstreamId}`);
}

/**
 * Records how the gateway's client at the upstream's authorization server came about at its last connect
 * (shown by views). Written as a control-plane change, so every replica's records show it.
 */
export async function recordOAuthRegistration(
  ctx: StoreContext,
  upstreamId: string,
  registration: OAuthRegistration,
): Promise<void> {
  await ctx.transaction(async (trx) => {
    await trx
      .updateTable('upstreams')
      .set({ oauth_registration: registration })
      .where('id', '=', upstreamId)
      .execute();
  });
}

const REGISTRATIONS: readonly string[] = ['configured', 'metadata_document', 'dynamic'];

/** The recorded registration method, if any (a configured client id always says `configured`). */
export function registrationOf(row: UpstreamsTable): OAuthRegistration | undefined {
  if (row.oauth_client_id) return 'configured';
  const r = row.oauth_registration ?? undefined;
  return r !== undefined && REGISTRATIONS.includes(r) ? (r as OAuthRegistration) : undefined;
}

/** How an upstream is authorized, as records and views show it (no secret). */
export function toAuth(row: UpstreamsTable): UpstreamAuth {
  const header = row.auth_header ?? undefined;
  if (row.auth_mode === 'project') return { mode: 'project', ...(header && { header }) };
  if (row.auth_mode === 'per_user') {
    const registration = registrationOf(row);
    const oauth =
      Number(row.oauth ?? 0) === 1
        ? {
            ...(row.oauth_client_id ? { clientId: row.oauth_client_id } : {}),
            clientSecretSet: row.oauth_client_secret != null,
            ...(registration && { registration }),
          }
        : undefined;
    const tokenExchange = tokenExchangeOf(row);
    return {
      mode: 'per_user',
      ...(header && { header }),
      ...(oauth && { oauth }),
      ...(tokenExchange && { tokenExchange }),
    };
  }
  return { mode: 'none' };
}
