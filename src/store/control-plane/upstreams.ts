/**
 * A project's upstreams: the MCP servers it routes to, each with an alias unique in the project, a URL,
 * an on/off switch and how calls to it are authorised (none, one project credential, or each user's
 * own authorization: authorizations.ts). The project credential is sealed with the store cipher, bound
 * to the upstream's id, and never returned: views say only whether one is set. Removing an upstream
 * removes its credential and every user authorization granted for it; re-pointing it drops what was
 * given for the old address, and a manager's address must pass the address policy (upstream-addresses.ts).
 * The OAuth client settings are upstream-oauth.ts's. Project managers only.
 */
import type { z } from 'zod';
import type { UpstreamProbe } from '../../protocol';
import { PROBE_FAILED } from '../../protocol';
import type { UpstreamsTable } from '../schema';
import { secretsEqual } from './tokens';
import { LIST_KINDS } from '../sessions/upstream-events';
import { requireManagedProject } from './access';
import { auditBy } from './audit';
import type { Db, StoreContext } from './context';
import { insertUnique, newId } from './context';
import { ControlPlaneError } from './errors';
import { announceListChanges } from './list-changes';
import type { NewUpstream, UpstreamPatch } from './schemas';
import type { Dropped } from './upstream-addresses';
import { oauthColumns, patchOAuth, toAuth } from './upstream-oauth';
import { patchTokenExchange, tokenExchangeColumns } from './token-exchange';
import { hostingAudit, hostingColumn, hostingOf, patchHosting } from './upstream-hosting';
import {
  addressOf,
  approvedBy,
  auditDropped,
  checkManagedAddress,
  dropBoundGrants,
  moveOf,
  revokeDroppedAtServers,
} from './upstream-addresses';
import { NewUpstreamSchema, parse, UpstreamPatchSchema } from './schemas';
import type { Principal, UpstreamAuth, UpstreamRecord } from './types';
import type { Updated, UpstreamView } from './views';

export { recordOAuthRegistration, toAuth, upstreamOAuthClient } from './upstream-oauth';

export async function addUpstream(
  ctx: StoreContext,
  actor: Principal,
  projectRef: string,
  input: NewUpstream,
): Promise<UpstreamView> {
  const u = parse(NewUpstreamSchema, input);
  const project = await requireManagedProject(ctx, actor, projectRef);
  await checkManagedAddress(ctx, actor, project.id, u.url);
  const now = ctx.nowIso();
  const id = newId('ups');
  const row: UpstreamsTable = {
    id,
    project_id: project.id,
    alias: u.alias,
    url: u.url,
    enabled: u.enabled ? 1 : 0,
    auth_mode: u.auth.mode,
    auth_header: u.auth.mode === 'none' ? null : (u.auth.header ?? null),
    credential:
      u.auth.mode === 'project' && u.auth.credential !== undefined
        ? sealUpstreamCredential(ctx, id, u.auth.credential)
        : null,
    ...oauthColumns(ctx, id, u.auth),
    ...tokenExchangeColumns(ctx, id, u.auth),
    hosting: hostingColumn(u.hosting),
    address_approved: approvedBy(actor),
    created_at: now,
    updated_at: now,
  };
  await ctx.transaction(async (trx) => {
    await insertUnique(
      trx.insertInto('upstreams').values(row),
      `Upstream "${u.alias}" already exists in project "${project.slug}"`,
    );
    await auditBy(ctx, trx, actor, project.id, 'upstream.added', {
      upstreamId: id,
      alias: u.alias,
      authMode: u.auth.mode,
      credentialSet: row.credential !== null,
      ...(row.oauth === 1 && { oauth: true, oauthClientSecretSet: row.oauth_client_secret != null }),
      ...(row.token_exchange !== null && { tokenExchange: true }),
      ...(row.hosting !== null && hostingAudit(row.hosting)),
    });
    if (Number(row.enabled) !== 0)
      await announceListChanges(trx, { projectId: project.id, upstreamId: id, kinds: LIST_KINDS });
  });
  return toUpstreamView(row, actor);
}

export async function listUpstreams(
  ctx: StoreContext,
  actor: Principal,
  projectRef: string,
): Promise<UpstreamView[]> {
  const project = await requireManagedProject(ctx, actor, projectRef);
  return (await upstreamRows(ctx.db, project.id)).map((r) => toUpstreamView(r, actor));
}

export async function updateUpstream(
  ctx: StoreContext,
  actor: Principal,
  projectRef: string,
  alias: string,
  patchInput: UpstreamPatch,
): Promise<Updated<UpstreamView>> {
  const patch = parse(UpstreamPatchSchema, patchInput);
  const project = await requireManagedProject(ctx, actor, projectRef);
  const row = await requireUpstreamRow(ctx, project, alias);
  const { next, fields } = patchedUpstream(ctx, row, patch);
  const move = moveOf(row, next);
  // An operator restating the URL approves the address; a manager moving it (or naming another token
  // exchange issuer, reached like the upstream) withdraws the approval.
  const managerIssuer = actor.kind !== 'admin' && fields.includes('tokenExchange');
  const approved =
    actor.kind === 'admin' && patch.url !== undefined
      ? 1
      : move.address || managerIssuer
        ? 0
        : row.address_approved;
  if (Number(approved ?? 0) !== Number(row.address_approved ?? 0)) {
    next.address_approved = approved;
    fields.push('addressApproved');
  }
  if (fields.length === 0) return { record: toUpstreamView(row, actor), changed: false };
  if (move.address) await checkManagedAddress(ctx, actor, project.id, next.url);
  next.updated_at = ctx.nowIso();
  let dropped: Dropped | undefined;
  await ctx.transaction(async (trx) => {
    await trx
      .updateTable('upstreams')
      .set({
        url: next.url,
        ...(next.url !== row.url && probeColumns(undefined)),
        enabled: next.enabled,
        auth_mode: next.auth_mode,
        auth_header: next.auth_header,
        credential: next.credential,
        oauth: next.oauth ?? 0,
        oauth_client_id: next.oauth_client_id ?? null,
        oauth_client_secret: next.oauth_client_secret ?? null,
        oauth_registration: next.oauth_registration ?? null,
        token_exchange: next.token_exchange ?? null,
        token_exchange_secret: next.token_exchange_secret ?? null,
        hosting: next.hosting ?? null,
        address_approved: next.address_approved ?? 0,
        updated_at: next.updated_at,
      })
      .where('id', '=', row.id)
      .execute();
    await auditBy(ctx, trx, actor, project.id, 'upstream.updated', {
      upstreamId: row.id,
      alias: row.alias,
      fields,
      ...(fields.includes('hosting') && hostingAudit(next.hosting)),
    });
    // Tokens got by exchange are for the settings and the address they were got with.
    if (move.address || fields.some((f) => f.startsWith('tokenExchange') || f === 'auth'))
      await trx.deleteFrom('upstream_token_exchange').where('upstream_id', '=', row.id).execute();
    // Credentials stay where they were given (upstream-addresses.ts): all in this same transaction.
    if (move.address || move.oauthClient) {
      dropped = await dropBoundGrants(ctx, trx, row, move);
      await auditDropped(ctx, trx, actor, project.id, row, {
        move,
        projectCredential: row.credential !== null && next.credential === null,
        oauthClientSecret: row.oauth_client_secret != null && next.oauth_client_secret == null,
        dropped,
      });
    }
    // Turned on or off, re-pointed, another credential: what the project's clients see may differ.
    if (Number(row.enabled) !== 0 || Number(next.enabled) !== 0)
      await announceListChanges(trx, { projectId: project.id, upstreamId: row.id, kinds: LIST_KINDS });
  });
  if (dropped) await revokeDroppedAtServers(ctx, dropped);
  return { record: toUpstreamView(next, actor), changed: true };
}

/** The row after a patch, and the fields that really change (resending the stored credential is none). */
function patchedUpstream(
  ctx: StoreContext,
  row: UpstreamsTable,
  patch: z.output<typeof UpstreamPatchSchema>,
): { next: UpstreamsTable; fields: string[] } {
  const next: UpstreamsTable = { ...row };
  const fields: string[] = [];
  const moved = patch.url !== undefined && addressOf(patch.url) !== addressOf(row.url);
  if (patch.url !== undefined && patch.url !== row.url) {
    next.url = patch.url;
    // What was probed at the old address says nothing about the new one.
    Object.assign(next, probeColumns(undefined));
    fields.push('url');
  }
  if (patch.enabled !== undefined && (patch.enabled ? 1 : 0) !== row.enabled) {
    next.enabled = patch.enabled ? 1 : 0;
    fields.push('enabled');
  }
  if (patch.auth !== undefined) {
    const a = patch.auth;
    const header = a.mode === 'none' ? null : (a.header ?? null);
    if (a.mode !== row.auth_mode || header !== row.auth_header) {
      next.auth_mode = a.mode;
      next.auth_header = header;
      fields.push('auth');
    }
    patchOAuth(ctx, row, next, a, fields);
    patchTokenExchange(ctx, row, next, a, fields);
    if (a.mode !== 'project') {
      if (row.credential !== null) {
        next.credential = null;
        fields.push('credential');
      }
    } else if (a.credential !== undefined) {
      const same =
        row.credential !== null &&
        secretsEqual(openUpstreamCredential(ctx, row.id, row.credential), a.credential);
      if (!same) {
        next.credential = sealUpstreamCredential(ctx, row.id, a.credential);
        fields.push('credential');
      }
    }
  }
  patchHosting(row, next, patch.hosting, fields);
  if (moved) dropSecretsNotGivenAgain(next, patch, fields);
  return { next, fields };
}

/**
 * A re-pointed upstream keeps no secret given for its old address: the project credential and the OAuth
 * client secret go unless this same patch gives them (again), and are then bound to the new address.
 */
function dropSecretsNotGivenAgain(
  next: UpstreamsTable,
  patch: z.output<typeof UpstreamPatchSchema>,
  fields: string[],
): void {
  const a = patch.auth;
  const credentialGiven = a?.mode === 'project' && a.credential !== undefined;
  if (!credentialGiven && next.credential !== null) {
    next.credential = null;
    if (!fields.includes('credential')) fields.push('credential');
  }
  const secretGiven = a?.mode === 'per_user' && a.oauth?.clientSecret !== undefined;
  if (!secretGiven && next.oauth_client_secret != null) {
    next.oauth_client_secret = null;
    if (!fields.includes('oauthClientSecret')) fields.push('oauthClientSecret');
  }
}

/** Whether users connect `upstream` with OAuth: it says so, or (legacy `connectUpstreams`) every `per_user` one. */
export function connectsWithOAuth(upstream: { auth: UpstreamAuth }, legacyAll = false): boolean {
  return upstream.auth.mode === 'per_user' && (upstream.auth.oauth !== undefined || legacyAll);
}

/** Removes an upstream with its credentials and every user authorization granted for it. */
export async function removeUpstream(
  ctx: StoreContext,
  actor: Principal,
  projectRef: string,
  alias: string,
): Promise<void> {
  const project = await requireManagedProject(ctx, actor, projectRef);
  const row = await requireUpstreamRow(ctx, project, alias);
  await ctx.transaction(async (trx) => {
    await trx.deleteFrom('upstream_authorizations').where('upstream_id', '=', row.id).execute();
    await trx.deleteFrom('upstream_token_exchange').where('upstream_id', '=', row.id).execute();
    // The copy of its configured OAuth client (oauth-clients.ts, saveConfigured) goes with it.
    await trx.deleteFrom('upstream_oauth_clients').where('id', '=', `oclc_${row.id}`).execute();
    await trx.deleteFrom('upstream_sessions').where('upstream_id', '=', row.id).execute();
    await trx.deleteFrom('upstreams').where('id', '=', row.id).execute();
    await auditBy(ctx, trx, actor, project.id, 'upstream.removed', {
      upstreamId: row.id,
      alias: row.alias,
    });
    if (Number(row.enabled) !== 0)
      await announceListChanges(trx, { projectId: project.id, upstreamId: row.id, kinds: LIST_KINDS });
  });
}

/** An upstream of the project by alias or id. */
export async function requireUpstreamRow(
  ctx: StoreContext,
  project: { id: string; slug: string },
  alias: string,
): Promise<UpstreamsTable> {
  const row = await ctx.db
    .selectFrom('upstreams')
    .selectAll()
    .where('project_id', '=', project.id)
    .where((eb) => eb.or([eb('alias', '=', alias), eb('id', '=', alias)]))
    .executeTakeFirst();
  if (!row) throw new ControlPlaneError('not_found', `No upstream "${alias}" in project "${project.slug}"`);
  return row;
}

/** A project's upstreams, by alias. */
export function upstreamRows(db: Db, projectId: string): Promise<UpstreamsTable[]> {
  return db
    .selectFrom('upstreams')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('alias')
    .execute();
}

export function openUpstreamCredential(ctx: StoreContext, upstreamId: string, sealed: Uint8Array): string {
  return ctx.cipher.open(sealed, upstreamCredentialAad(upstreamId)).toString('utf8');
}

function sealUpstreamCredential(ctx: StoreContext, upstreamId: string, credential: string): Buffer {
  return ctx.cipher.seal(Buffer.from(credential, 'utf8'), upstreamCredentialAad(upstreamId));
}

/** Binds a sealed project credential to its upstream: moved to another row, it does not open. */
function upstreamCredentialAad(upstreamId: string): string {
  return `upstream-credential:${upstreamId}`;
}

/**
 * Records what a probe found out (era, version, time, error). Not a configuration change: no audit
 * record and `updated_at` stays; but it is written as one (a control-plane transaction), so every
 * replica's served project records pick up the era at once.
 */
export async function recordUpstreamProbe(
  ctx: StoreContext,
  upstreamId: string,
  probe: UpstreamProbe,
): Promise<void> {
  await ctx.transaction(async (trx) => {
    await trx.updateTable('upstreams').set(probeColumns(probe)).where('id', '=', upstreamId).execute();
  });
}

/** The probe's columns; all null for none (never probed, or probed at another URL). */
function probeColumns(probe: UpstreamProbe | undefined) {
  return {
    protocol_era: probe?.era ?? null,
    protocol_version: probe?.protocolVersion ?? null,
    probed_at: probe?.probedAt ?? null,
    probe_error: probe?.error ?? null,
  };
}

function probeOf(row: UpstreamsTable): UpstreamProbe | undefined {
  if (!row.probed_at) return undefined;
  const era = row.protocol_era === 'modern' || row.protocol_era === 'legacy' ? row.protocol_era : null;
  return {
    era,
    protocolVersion: row.protocol_version ?? null,
    probedAt: row.probed_at,
    error: row.probe_error ?? null,
  };
}

export function toUpstreamRecord(row: UpstreamsTable): UpstreamRecord {
  const probe = probeOf(row);
  const hosting = hostingOf(row);
  return {
    id: row.id,
    alias: row.alias,
    url: row.url,
    enabled: Number(row.enabled) !== 0,
    auth: toAuth(row),
    addressApproved: Number(row.address_approved ?? 0) === 1,
    ...(probe && { probe }),
    ...(hosting && { hosting }),
  };
}

/**
 * An upstream as `viewer` sees it. A failed probe's detail is the instance administrator's: anyone else
 * reads one message for every failure, so a probe cannot tell an open port from a closed one.
 */
export function toUpstreamView(row: UpstreamsTable, viewer: Principal): UpstreamView {
  const { probe, ...record } = toUpstreamRecord(row);
  const shown =
    probe && viewer.kind !== 'admin' && probe.error !== null ? { ...probe, error: PROBE_FAILED } : probe;
  return {
    ...record,
    credentialSet: row.credential !== null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    probe: shown ?? { era: null, protocolVersion: null, probedAt: null, error: null },
  };
}
