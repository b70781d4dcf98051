/**
 * External identities (docs/oauth.md): a subject at an OpenID Connect issuer (the value of the configured
 * user claim) linked to one TaskRouter user. A valid access token or a dashboard sign-in through the
 * issuer names the subject; the user is found by the link, or, the first time, linked to the existing
 * user with the same handle (only when the deployment trusts the issuer's usernames) or provisioned.
 * From there every access rule is the user's: memberships, roles, task ownership.
 *
 * With a group → team mapping, the user's membership of each mapped team follows the token's groups
 * (added when a group maps to the team, removed when none does); teams the mapping does not name are
 * never touched. Changes are audited as `admin:oidc`. Answers are cached like every serving read
 * (serving-cache.ts), so a token's subject costs one lookup until the next control-plane change.
 */
import { z } from 'zod';
import { auditBy, writeTeamAudit } from './audit';
import type { Db, StoreContext } from './context';
import { insertUnique, newId } from './context';
import { ControlPlaneError } from './errors';
import { requireAdmin, requireUserRow } from './access';
import { HandleSchema, parse } from './schemas';
import type { Principal } from './types';

/** What a verified token or ID token says about its subject. */
export interface ExternalIdentity {
  issuer: string;
  subject: string;
  /** Handle and name for a provisioned user (sanitised; the subject when absent). */
  handle?: string;
  name?: string;
  /** The token's groups; undefined when it carries none (memberships are then left as they are). */
  groups?: readonly string[];
}

/** How an issuer's subjects become users (from the issuer's configuration). */
export interface IdentityPolicy {
  provision: boolean;
  linkExisting: boolean;
  /** Group → team slug. */
  groupTeams: Readonly<Record<string, string>>;
}

export interface IdentityView {
  id: string;
  issuer: string;
  subject: string;
  userId: string;
  createdAt: string;
}

const OIDC: Principal = { kind: 'admin', via: 'oidc' };

/** The user an external subject is (found, linked or provisioned); undefined when policy allows none. */
export function externalUser(
  ctx: StoreContext,
  identity: ExternalIdentity,
  policy: IdentityPolicy,
): Promise<string | undefined> {
  const groups = identity.groups === undefined ? '-' : [...identity.groups].sort().join('\u0000');
  const key = `${identity.issuer}\u0001${identity.subject}\u0001${groups}`;
  return ctx.serving.get('identity', key, async () => ({ value: await resolveUser(ctx, identity, policy) }));
}

async function resolveUser(
  ctx: StoreContext,
  identity: ExternalIdentity,
  policy: IdentityPolicy,
): Promise<string | undefined> {
  const userId = (await linkedUser(ctx.db, identity)) ?? (await link(ctx, identity, policy));
  if (userId === undefined) return undefined;
  if (identity.groups !== undefined && Object.keys(policy.groupTeams).length > 0) {
    await syncTeams(ctx, userId, identity.groups, policy.groupTeams);
  }
  return userId;
}

/** The id of the link between an external subject and its user, if there is one. */
export async function identityId(
  ctx: StoreContext,
  issuer: string,
  subject: string,
): Promise<string | undefined> {
  const row = await ctx.db
    .selectFrom('external_identities')
    .select('id')
    .where('issuer', '=', issuer)
    .where('subject', '=', subject)
    .executeTakeFirst();
  return row?.id;
}

async function linkedUser(db: Db, identity: ExternalIdentity): Promise<string | undefined> {
  const row = await db
    .selectFrom('external_identities')
    .select('user_id')
    .where('issuer', '=', identity.issuer)
    .where('subject', '=', identity.subject)
    .executeTakeFirst();
  return row?.user_id;
}

/** The first sign-in of a subject: linked to an existing user by handle, or a new user. */
async function link(
  ctx: StoreContext,
  identity: ExternalIdentity,
  policy: IdentityPolicy,
): Promise<string | undefined> {
  const wanted = sanitiseHandle(identity.handle ?? identity.subject);
  const existing = policy.linkExisting
    ? await ctx.db.selectFrom('users').select('id').where('handle', '=', wanted).executeTakeFirst()
    : undefined;
  if (!existing && !policy.provision) return undefined;
  try {
    return await ctx.transaction(async (trx) => {
      let userId = existing?.id;
      if (userId === undefined) {
        const handle = await freeHandle(trx, wanted);
        userId = newId('usr');
        const name = (identity.name ?? '').trim().slice(0, 200) || handle;
        await trx
          .insertInto('users')
          .values({ id: userId, handle, name, created_at: ctx.nowIso() })
          .execute();
        await auditBy(ctx, trx, OIDC, null, 'user.created', { userId, handle, issuer: identity.issuer });
      }
      await insertLink(ctx, trx, identity, userId);
      return userId;
    });
  } catch (err) {
    // Two first requests of the same subject at once: the other one linked it.
    const linked = await linkedUser(ctx.db, identity);
    if (linked !== undefined) return linked;
    throw err;
  }
}

async function insertLink(ctx: StoreContext, trx: Db, identity: ExternalIdentity, userId: string) {
  const id = newId('xid');
  await insertUnique(
    trx.insertInto('external_identities').values({
      id,
      issuer: identity.issuer,
      subject: identity.subject,
      user_id: userId,
      created_at: ctx.nowIso(),
    }),
    `Subject "${identity.subject}" of ${identity.issuer} is already linked`,
  );
  await auditBy(ctx, trx, OIDC, null, 'identity.linked', { identityId: id, userId, issuer: identity.issuer });
}

/** Memberships of the mapped teams follow the groups; other teams are left alone. */
async function syncTeams(
  ctx: StoreContext,
  userId: string,
  groups: readonly string[],
  groupTeams: Readonly<Record<string, string>>,
): Promise<void> {
  const mapped = [...new Set(Object.values(groupTeams))];
  const wanted = new Set(groups.flatMap((g) => (groupTeams[g] === undefined ? [] : [groupTeams[g]])));
  const teams = await ctx.db.selectFrom('teams').select(['id', 'slug']).where('slug', 'in', mapped).execute();
  const current = new Set(
    (
      await ctx.db
        .selectFrom('team_members')
        .select('team_id')
        .where('user_id', '=', userId)
        .where(
          'team_id',
          'in',
          teams.map((t) => t.id),
        )
        .execute()
    ).map((r) => r.team_id),
  );
  const add = teams.filter((t) => wanted.has(t.slug) && !current.has(t.id));
  const remove = teams.filter((t) => !wanted.has(t.slug) && current.has(t.id));
  if (add.length === 0 && remove.length === 0) return;
  await ctx.transaction(async (trx) => {
    for (const team of add) {
      await trx
        .insertInto('team_members')
        .values({ team_id: team.id, user_id: userId, created_at: ctx.nowIso() })
        .onConflict((oc) => oc.columns(['team_id', 'user_id']).doNothing())
        .execute();
      await writeTeamAudit(ctx, trx, OIDC, team.id, 'team.member_added', { userId, via: 'groups' });
    }
    for (const team of remove) {
      await trx
        .deleteFrom('team_members')
        .where('team_id', '=', team.id)
        .where('user_id', '=', userId)
        .execute();
      await writeTeamAudit(ctx, trx, OIDC, team.id, 'team.member_removed', { userId, via: 'groups' });
    }
  });
}

/** A handle the store accepts, from a username, an email address or a subject. */
function sanitiseHandle(raw: string): string {
  const base = raw
    .split('@')[0]
    ?.toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 40);
  return base && HandleSchema.safeParse(base).success ? base : 'user';
}

/** `handle`, or `handle-2`, `handle-3`… when taken. */
async function freeHandle(db: Db, handle: string): Promise<string> {
  const taken = new Set(
    (
      await db
        .selectFrom('users')
        .select('handle')
        .where((eb) => eb.or([eb('handle', '=', handle), eb('handle', 'like', `${handle}-%`)]))
        .execute()
    ).map((r) => r.handle),
  );
  if (!taken.has(handle)) return handle;
  for (let i = 2; ; i++) if (!taken.has(`${handle}-${i}`)) return `${handle}-${i}`;
}

// ── administration: the administrator links and unlinks subjects ahead of (or instead of) provisioning

const LinkSchema = z.strictObject({ issuer: z.url(), subject: z.string().min(1).max(512) });

export async function linkIdentity(
  ctx: StoreContext,
  actor: Principal,
  userRef: string,
  input: { issuer: string; subject: string },
): Promise<IdentityView> {
  requireAdmin(actor);
  const { issuer, subject } = parse(LinkSchema, input);
  const user = await requireUserRow(ctx.db, userRef);
  await ctx.transaction((trx) => insertLink(ctx, trx, { issuer, subject }, user.id));
  const row = await ctx.db
    .selectFrom('external_identities')
    .selectAll()
    .where('issuer', '=', issuer)
    .where('subject', '=', subject)
    .executeTakeFirstOrThrow();
  return toIdentityView(row);
}

export async function listIdentities(
  ctx: StoreContext,
  actor: Principal,
  userRef: string,
): Promise<IdentityView[]> {
  const user = await requireUserRow(ctx.db, userRef);
  if (!(actor.kind === 'admin' || (actor.kind === 'user' && actor.userId === user.id))) {
    throw new ControlPlaneError('forbidden', 'Only the user themselves or the administrator may do this');
  }
  const rows = await ctx.db
    .selectFrom('external_identities')
    .selectAll()
    .where('user_id', '=', user.id)
    .orderBy('created_at')
    .execute();
  return rows.map(toIdentityView);
}

/** Removes a link: the subject's tokens no longer act as the user (sessions opened with it end). */
export async function unlinkIdentity(ctx: StoreContext, actor: Principal, id: string): Promise<void> {
  requireAdmin(actor);
  await ctx.transaction(async (trx) => {
    const row = await trx
      .selectFrom('external_identities')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw new ControlPlaneError('not_found', `No identity "${id}"`);
    await trx.deleteFrom('external_identities').where('id', '=', id).execute();
    await auditBy(ctx, trx, actor, null, 'identity.unlinked', { identityId: id, userId: row.user_id });
  });
}

function toIdentityView(row: {
  id: string;
  issuer: string;
  subject: string;
  user_id: string;
  created_at: string;
}): IdentityView {
  return {
    id: row.id,
    issuer: row.issuer,
    subject: row.subject,
    userId: row.user_id,
    createdAt: row.created_at,
  };
}
