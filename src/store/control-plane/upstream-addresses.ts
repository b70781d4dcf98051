/**
 * Where an upstream's requests and OAuth tokens go, who may set it, and what changing it ends
 * (docs/admin.md, "Upstream addresses" and "Re-pointing an upstream").
 *
 * - Who: an address an operator sets (configuration file, bootstrap file, instance admin) is approved
 *   (`address_approved`), and its connections skip the address policy; one a project manager sets is
 *   checked against the policy here (`checkUpstreamAddress`, resolving the name) and on every connection.
 * - What a change ends: credentials are bound to where they were given. Re-pointing an upstream (its
 *   address: the URL without fragment, normalized) drops, in the change's own transaction, the project
 *   credential (unless the same change gives one, which is then bound to the new address), the configured
 *   OAuth client secret (likewise), every user's authorization for it, its OAuth connections, its
 *   2025-era sessions and its copy of the configured OAuth client. Changing the OAuth client the gateway
 *   uses at the upstream's authorization server (`auth.oauth.clientId`) ends the OAuth connections made
 *   with the old one. OAuth connections are then revoked at the server that issued them (RFC 7009),
 *   with the client they were issued to, after the transaction, best effort; nothing goes to the new
 *   address. Audited as `upstream.credentials_dropped` with counts only.
 */
import { isStdioUrl } from '../../config/stdio';
import type { UpstreamAuthorizationsTable, UpstreamsTable } from '../schema';
import type { KeptClient } from './oauth-clients';
import { OAuthClientStore } from './oauth-clients';
import { auditBy } from './audit';
import type { Db, RevokeAtServer, StoreContext } from './context';
import { ControlPlaneError } from './errors';
import { refreshAad } from './renewal';
import type { Principal } from './types';

/**
 * The address an upstream URL names: scheme, host, port, path and query as a client sends them (WHATWG
 * normalized: case of scheme and host, default ports), without the fragment, which is never sent.
 */
export function addressOf(url: string): string {
  let address = addresses.get(url);
  if (address === undefined) {
    // Read on every poll of a running task (its endpoint's credential is checked against it): parsed
    // once per URL. Bounded: a process sees few upstream URLs, and starting over costs one parse each.
    if (addresses.size >= MAX_REMEMBERED_ADDRESSES) addresses.clear();
    address = parseAddress(url);
    addresses.set(url, address);
  }
  return address;
}

const MAX_REMEMBERED_ADDRESSES = 10_000;
const addresses = new Map<string, string>();

function parseAddress(url: string): string {
  try {
    const u = new URL(url);
    u.hash = '';
    return u.href;
  } catch {
    return url;
  }
}

/** What a change of an upstream moves: its address, or the OAuth client its connections were issued to. */
export interface UpstreamMove {
  address: boolean;
  oauthClient: boolean;
}

export function moveOf(row: UpstreamsTable, next: UpstreamsTable): UpstreamMove {
  return {
    address: addressOf(row.url) !== addressOf(next.url),
    oauthClient: (row.oauth_client_id ?? null) !== (next.oauth_client_id ?? null),
  };
}

/**
 * Refuses an address a project manager may not use (the `checkUpstreamAddress` option: the address
 * policy, resolving the name). Operators are not checked. The refusal is audited with the host only.
 */
export async function checkManagedAddress(
  ctx: StoreContext,
  actor: Principal,
  projectId: string,
  url: string,
): Promise<void> {
  if (isStdioUrl(url)) {
    // Commands come from the operator's catalog only, whoever names an entry (operators included).
    const checkStdio = ctx.options.checkStdioAddress;
    if (!checkStdio)
      throw new ControlPlaneError('invalid', 'url: this gateway runs no local (stdio) upstreams');
    try {
      checkStdio(url);
    } catch (err) {
      throw new ControlPlaneError('invalid', err instanceof Error ? err.message : String(err));
    }
    return;
  }
  const check = ctx.options.checkUpstreamAddress;
  if (actor.kind === 'admin' || !check) return;
  try {
    await check(url);
  } catch (err) {
    await auditBy(ctx, ctx.db, actor, projectId, 'upstream.address_refused', { host: new URL(url).host });
    throw new ControlPlaneError('forbidden', err instanceof Error ? err.message : String(err));
  }
}

/** Whether `actor` sets the address as an operator: then its connections skip the address policy. */
export function approvedBy(actor: Principal): number {
  return actor.kind === 'admin' ? 1 : 0;
}

/** A connection to revoke at its authorization server once the change is committed. */
type Revocation = Parameters<RevokeAtServer>[0];

export interface Dropped {
  authorizations: number;
  oauthConnections: number;
  revocations: Revocation[];
}

/**
 * In the change's transaction: ends what was bound to the old address or OAuth client (see the module
 * comment). The project credential and the client secret are the row's own columns (upstreams.ts).
 */
export async function dropBoundGrants(
  ctx: StoreContext,
  trx: Db,
  row: UpstreamsTable,
  move: UpstreamMove,
): Promise<Dropped> {
  let q = trx
    .selectFrom('upstream_authorizations')
    .selectAll()
    .where('upstream_id', '=', row.id)
    .where('revoked_at', 'is', null);
  // The OAuth client alone changed: hand-granted tokens are still for this address.
  if (!move.address) q = q.where('oauth_client_id', 'is not', null);
  const grants = await q.execute();
  // Read before the client's copy is deleted below: revocation needs the client the tokens were issued to.
  const clients = new OAuthClientStore(trx, ctx.cipher);
  const kept = new Map<string, KeptClient | undefined>();
  const revocations: Revocation[] = [];
  for (const g of grants) {
    if (!g.oauth_client_id) continue;
    if (!kept.has(g.oauth_client_id)) kept.set(g.oauth_client_id, await clients.byId(g.oauth_client_id));
    const client = kept.get(g.oauth_client_id);
    revocations.push({
      clientId: g.oauth_client_id,
      ...(client && { client }),
      accessToken: openGrant(ctx, g),
      refreshToken: g.refresh_token ? ctx.cipher.open(g.refresh_token, refreshAad(g)).toString('utf8') : null,
      // Where the tokens were issued: the old address's server, as the old address was approved.
      addressApproved: Number(row.address_approved ?? 0) === 1,
    });
  }
  if (grants.length > 0) {
    await trx
      .updateTable('upstream_authorizations')
      .set({ revoked_at: ctx.nowIso(), refresh_token: null })
      .where(
        'id',
        'in',
        grants.map((g) => g.id),
      )
      .execute();
  }
  // The copy of the configured client is made again, for the server the upstream now names, on the next connect.
  await trx.deleteFrom('upstream_oauth_clients').where('id', '=', `oclc_${row.id}`).execute();
  // A 2025-era session belongs to the server that opened it.
  if (move.address) await trx.deleteFrom('upstream_sessions').where('upstream_id', '=', row.id).execute();
  return {
    authorizations: grants.length,
    oauthConnections: grants.filter((g) => g.oauth_client_id).length,
    revocations,
  };
}

/** The `upstream.credentials_dropped` audit record: what was dropped, counts only, never a secret. */
export async function auditDropped(
  ctx: StoreContext,
  trx: Db,
  actor: Principal,
  projectId: string,
  row: UpstreamsTable,
  r: { move: UpstreamMove; projectCredential: boolean; oauthClientSecret: boolean; dropped: Dropped },
): Promise<void> {
  await auditBy(ctx, trx, actor, projectId, 'upstream.credentials_dropped', {
    upstreamId: row.id,
    alias: row.alias,
    because: r.move.address ? 'address_changed' : 'oauth_client_changed',
    projectCredential: r.projectCredential,
    oauthClientSecret: r.oauthClientSecret,
    authorizations: r.dropped.authorizations,
    oauthConnections: r.dropped.oauthConnections,
  });
}

/** After the transaction: each dropped OAuth connection revoked where it was issued, best effort. */
export async function revokeDroppedAtServers(ctx: StoreContext, dropped: Dropped): Promise<void> {
  const hook = ctx.options.revokeAtServer;
  if (!hook) return;
  await Promise.all(dropped.revocations.map((r) => hook(r).catch(() => undefined)));
}

function openGrant(ctx: StoreContext, a: UpstreamAuthorizationsTable): string {
  return ctx.cipher
    .open(a.credential, `upstream-authorization:${a.id}:${a.upstream_id}:${a.user_id}`)
    .toString('utf8');
}
