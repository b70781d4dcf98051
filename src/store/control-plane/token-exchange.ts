/**
 * `per_user` upstreams whose users' credentials come from RFC 8693 token exchange (docs/oauth.md,
 * "Token exchange"): the settings (issuer, client id, audience, scope in the clear as JSON; the client
 * secret sealed, bound to the upstream, never returned), and the exchanged tokens, one per user and
 * upstream in `upstream_token_exchange`, sealed and bound to their row, user and upstream.
 *
 * A caller who signed in with an OAuth access token (the gateway's own OAuth, src/api/oauth) has it
 * exchanged at the issuer the first time, and again once the token is within RENEW_MARGIN_MS of its
 * expiry; in between, the kept token is used. The row keeps its id across renewals: tasks bound to it
 * keep working, and a task's later upstream calls (on the worker, with no caller's token at hand) use
 * the kept token while it lasts. A caller who authenticated otherwise (an API token) gets none: there
 * is no OAuth token to exchange. Rows go when the settings change, the upstream moves or is removed.
 */
import type { z } from 'zod';
import type { UpstreamsTable, UpstreamTokenExchangeTable } from '../schema';
import type { StoreContext } from './context';
import { newId } from './context';
import { RENEW_MARGIN_MS } from './renewal';
import { patchedClientSecret } from './secrets';
import type { AuthPatchStep, NewUpstreamSchema } from './schemas';
import type { CredentialSubject, TokenExchangeSettings, UpstreamCredential } from './types';
export type { CredentialSubject } from './types';
import { addressOf } from './upstream-addresses';

/** Without `expires_in`, an exchanged token is kept this long. */
const DEFAULT_LIFETIME_MS = 5 * 60_000;

type Auth = z.output<typeof NewUpstreamSchema>['auth'];
type Settings = Omit<TokenExchangeSettings, 'clientSecretSet'>;

const secretAad = (upstreamId: string) => `upstream-token-exchange-secret:${upstreamId}`;
const tokenAad = (r: { id: string; user_id: string; upstream_id: string }) =>
  `upstream-token-exchange:${r.id}:${r.user_id}:${r.upstream_id}`;

function settingsJson(auth: Auth | undefined): string | null {
  const t = auth?.mode === 'per_user' ? auth.tokenExchange : undefined;
  if (!t) return null;
  const s: Settings = {
    issuer: t.issuer,
    clientId: t.clientId,
    ...(t.audience !== undefined && { audience: t.audience }),
    ...(t.scope !== undefined && { scope: t.scope }),
  };
  return JSON.stringify(s);
}

/** The token exchange columns of a new upstream. */
export function tokenExchangeColumns(ctx: StoreContext, id: string, auth: Auth) {
  const t = auth.mode === 'per_user' ? auth.tokenExchange : undefined;
  return {
    token_exchange: settingsJson(auth),
    token_exchange_secret:
      t?.clientSecret === undefined ? null : ctx.cipher.seal(Buffer.from(t.clientSecret), secretAad(id)),
  };
}

/**
 * A patch's `auth` replaces the token exchange settings; an omitted `clientSecret` keeps the stored one
 * while issuer and client id stay the same, and resending the stored one changes nothing.
 */
export const patchTokenExchange: AuthPatchStep = (ctx, row, next, a, fields) => {
  const json = settingsJson(a);
  const was = row.token_exchange ?? null;
  if (json !== was) {
    next.token_exchange = json;
    fields.push('tokenExchange');
  }
  const t = a.mode === 'per_user' ? a.tokenExchange : undefined;
  const before = settingsOf(was);
  const sameClient = t !== undefined && before?.issuer === t.issuer && before.clientId === t.clientId;
  const secret = patchedClientSecret(row.token_exchange_secret ?? null, sameClient, t?.clientSecret, {
    open: (sealed) => openSecret(ctx, row.id, sealed),
    seal: (given) => ctx.cipher.seal(Buffer.from(given), secretAad(row.id)),
  });
  if (secret !== undefined) {
    next.token_exchange_secret = secret;
    fields.push('tokenExchangeSecret');
  }
};

function settingsOf(json: string | null | undefined): Settings | undefined {
  if (!json) return undefined;
  try {
    return JSON.parse(json) as Settings;
  } catch {
    return undefined;
  }
}

/** The settings as records and views show them (never the secret). */
export function tokenExchangeOf(row: UpstreamsTable): TokenExchangeSettings | undefined {
  const s = settingsOf(row.token_exchange);
  return s && { ...s, clientSecretSet: row.token_exchange_secret != null };
}

function openSecret(ctx: StoreContext, upstreamId: string, sealed: Uint8Array): string {
  return ctx.cipher.open(sealed, secretAad(upstreamId)).toString('utf8');
}

const exchanging = new WeakMap<StoreContext, Map<string, Promise<UpstreamTokenExchangeTable>>>();

/**
 * The exchanged credential of `userId` for the upstream `row`: the kept one while it is good, else a new
 * exchange (with the caller's access token only). `expiry.at`: when the serving cache must look again.
 */
export async function exchangedCredential(
  ctx: StoreContext,
  userId: string,
  row: UpstreamsTable,
  settings: TokenExchangeSettings,
  subject: CredentialSubject,
  expiry: { at: string | null },
): Promise<UpstreamCredential> {
  const name = `Upstream "${row.alias}"`;
  const now = Date.now();
  const kept = await exchangedRow(ctx, row.id, userId);
  const usable = kept && kept.address === addressOf(row.url) ? kept : undefined;
  const until = (r: UpstreamTokenExchangeTable) => new Date(r.expires_at ?? 0).getTime();
  // Not looked at again for long: a refusal, or a failed exchange, is decided afresh on the next call.
  expiry.at = new Date(now).toISOString();
  let found: UpstreamTokenExchangeTable | undefined;
  if (subject.accessToken !== undefined) {
    if (usable && until(usable) - RENEW_MARGIN_MS > now) found = usable;
    else {
      try {
        const accessToken = subject.accessToken;
        found = await exchangeOnce(ctx, { upstreamId: row.id, userId }, () =>
          exchange(ctx, userId, row, settings, accessToken),
        );
      } catch (err) {
        return {
          ok: false,
          reason: `${name}: exchanging your access token at ${settings.issuer} failed: ${(err as Error).message}`,
        };
      }
    }
    expiry.at = new Date(until(found) - RENEW_MARGIN_MS).toISOString();
  } else if (subject.task && usable && until(usable) > now) {
    found = usable;
    expiry.at = new Date(until(found)).toISOString();
  }
  if (!found) {
    return {
      ok: false,
      reason: subject.task
        ? `${name}: the token obtained for this task by token exchange has expired; call the upstream again to renew it`
        : `${name} obtains each caller's credential by exchanging their OAuth access token; this caller did not sign in with OAuth (an API token cannot be exchanged)`,
      tokenExchange: 'oauth_sign_in_required',
    };
  }
  const token = ctx.cipher.open(found.token, tokenAad(found)).toString('utf8');
  const header = row.auth_header ?? undefined;
  return {
    ok: true,
    headers: header === undefined ? { Authorization: `Bearer ${token}` } : { [header]: token },
    authorizationId: found.id,
    boundTo: row.url,
  };
}

/** One exchange per user and upstream at a time in this process: a second asker gets the first's. */
function exchangeOnce(
  ctx: StoreContext,
  key: { upstreamId: string; userId: string },
  work: () => Promise<UpstreamTokenExchangeTable>,
): Promise<UpstreamTokenExchangeTable> {
  let inFlight = exchanging.get(ctx);
  if (!inFlight) exchanging.set(ctx, (inFlight = new Map()));
  const id = `${key.upstreamId}|${key.userId}`;
  const running = inFlight.get(id);
  if (running) return running;
  const map = inFlight;
  const started = work().finally(() => map.delete(id));
  map.set(id, started);
  return started;
}

async function exchange(
  ctx: StoreContext,
  userId: string,
  row: UpstreamsTable,
  settings: TokenExchangeSettings,
  accessToken: string,
): Promise<UpstreamTokenExchangeTable> {
  const hook = ctx.options.exchangeToken;
  if (!hook) throw new Error('token exchange is not available in this process');
  const sealed = row.token_exchange_secret ?? null;
  const got = await hook({
    issuer: settings.issuer,
    clientId: settings.clientId,
    ...(sealed !== null && { clientSecret: openSecret(ctx, row.id, sealed) }),
    ...(settings.audience !== undefined && { audience: settings.audience }),
    ...(settings.scope !== undefined && { scope: settings.scope }),
    resource: row.url,
    subjectToken: accessToken,
    addressApproved: Number(row.address_approved ?? 0) === 1,
  });
  const nowIso = new Date().toISOString();
  const expiresAt = new Date(got.expiresAt ?? Date.now() + DEFAULT_LIFETIME_MS).toISOString();
  const existing = await exchangedRow(ctx, row.id, userId);
  const id = existing?.id ?? newId('utx');
  const values = {
    token: ctx.cipher.seal(
      Buffer.from(got.accessToken),
      tokenAad({ id, user_id: userId, upstream_id: row.id }),
    ),
    expires_at: expiresAt,
    address: addressOf(row.url),
    updated_at: nowIso,
  };
  // Another replica may have written the row meanwhile: the token it sealed is bound to its row id, so
  // the last writer's id and token go together (an upsert keeps the id of the row that is there).
  if (existing) {
    await ctx.db.updateTable('upstream_token_exchange').set(values).where('id', '=', id).execute();
  } else {
    await ctx.db
      .insertInto('upstream_token_exchange')
      .values({ id, upstream_id: row.id, user_id: userId, created_at: nowIso, ...values })
      .onConflict((oc) => oc.columns(['upstream_id', 'user_id']).doNothing())
      .execute();
  }
  const fresh = await exchangedRow(ctx, row.id, userId);
  if (!fresh) throw new Error(`Upstream "${row.alias}": the exchanged token was not stored`);
  return fresh;
}

/** One user's exchanged token for one upstream, if stored. */
function exchangedRow(
  ctx: StoreContext,
  upstreamId: string,
  userId: string,
): Promise<UpstreamTokenExchangeTable | undefined> {
  return ctx.db
    .selectFrom('upstream_token_exchange')
    .selectAll()
    .where('upstream_id', '=', upstreamId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

/** Whether a task's exchanged authorization (`utx_…`) is still in effect: its row is still there. */
export async function exchangedAuthorizationValid(ctx: StoreContext, id: string): Promise<boolean> {
  const row = await ctx.db
    .selectFrom('upstream_token_exchange')
    .select('id')
    .where('id', '=', id)
    .executeTakeFirst();
  return row !== undefined;
}
