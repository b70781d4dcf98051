/**
 * The OAuth client a `per_user` upstream names for its authorization server (docs/oauth.md): `oauth` on
 * or off, the client id in the clear, the client secret sealed with the store cipher and bound to the
 * upstream (`upstream-oauth-client-secret:{id}`), never returned. Used by upstreams.ts when an upstream
 * is added or changed, and by the connect flow (`upstreamOAuthClient`).
 */
import type { z } from 'zod';
import type { UpstreamsTable } from '../schema';
import { secretsEqual } from '../tokens';
import type { StoreContext } from './context';
import type { NewUpstreamSchema, UpstreamPatchSchema } from './schemas';

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
export function patchOAuth(
  ctx: StoreContext,
  row: UpstreamsTable,
  next: UpstreamsTable,
  a: NonNullable<z.output<typeof UpstreamPatchSchema>['auth']>,
  fields: string[],
): void {
  const o = a.mode === 'per_user' ? a.oauth : undefined;
  const clientId = o?.clientId ?? null;
  const was = { oauth: Number(row.oauth ?? 0), clientId: row.oauth_client_id ?? null };
  if ((o ? 1 : 0) !== was.oauth || clientId !== was.clientId) {
    next.oauth = o ? 1 : 0;
    next.oauth_client_id = clientId;
    fields.push('oauth');
  }
  const stored = row.oauth_client_secret ?? null;
  let secret: Buffer | null = clientId !== null && clientId === was.clientId ? stored : null;
  if (o?.clientSecret !== undefined) {
    const same = stored !== null && secretsEqual(openOAuthClientSecret(ctx, row.id, stored), o.clientSecret);
    secret = same ? stored : sealOAuthClientSecret(ctx, row.id, o.clientSecret);
  }
  if (secret !== stored) {
    next.oauth_client_secret = secret;
    fields.push('oauthClientSecret');
  }
}

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
