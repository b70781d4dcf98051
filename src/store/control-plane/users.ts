/**
 * Users: a handle unique on the instance and a display name. Only the administrator creates and lists
 * users; a user (and the administrator) reads and renames themselves. A user's projects are those of
 * their teams (role `team`) and those they are a direct member of (`direct`); team wins where both.
 * Their tokens are user-tokens.ts, their team and project memberships memberships.ts.
 */
import { z } from 'zod';
import { projectsOfUser, requireAdmin, requireSelfOrAdmin, requireUserRow } from './access';
import { auditBy } from './audit';
import type { StoreContext } from './context';
import { insertUnique, newId } from './context';
import { HandleSchema, NameSchema, parse } from './schemas';
import type { Principal } from './types';
import type { TeamView, Updated, UserView } from './views';
import { toTeamView, toUserView } from './views';

export async function createUser(
  ctx: StoreContext,
  actor: Principal,
  input: { handle: string; name: string },
): Promise<UserView> {
  requireAdmin(actor);
  const { handle, name } = parse(z.strictObject({ handle: HandleSchema, name: NameSchema }), input);
  const row = { id: newId('usr'), handle, name, created_at: ctx.nowIso() };
  await ctx.transaction(async (trx) => {
    await insertUnique(trx.insertInto('users').values(row), `User "${handle}" already exists`);
    await auditBy(ctx, trx, actor, null, 'user.created', { userId: row.id, handle });
  });
  return toUserView(row);
}

export async function updateUser(
  ctx: StoreContext,
  actor: Principal,
  ref: string,
  input: { name?: string },
): Promise<Updated<UserView>> {
  const { name } = parse(z.strictObject({ name: NameSchema.optional() }), input);
  const user = await requireUserRow(ctx.db, ref);
  requireSelfOrAdmin(actor, user.id);
  if (name === undefined || name === user.name) return { record: toUserView(user), changed: false };
  await ctx.transaction(async (trx) => {
    await trx.updateTable('users').set({ name }).where('id', '=', user.id).execute();
    await auditBy(ctx, trx, actor, null, 'user.updated', { userId: user.id });
  });
  return { record: toUserView({ ...user, name }), changed: true };
}

export async function listUsers(ctx: StoreContext, actor: Principal): Promise<UserView[]> {
  requireAdmin(actor);
  return (await ctx.db.selectFrom('users').selectAll().orderBy('handle').execute()).map(toUserView);
}

/** A user with their teams and the projects they may call (team or direct membership). */
export async function getUser(
  ctx: StoreContext,
  actor: Principal,
  ref: string,
): Promise<
  UserView & { teams: TeamView[]; projects: { id: string; slug: string; role: 'team' | 'direct' }[] }
> {
  const user = await requireUserRow(ctx.db, ref);
  requireSelfOrAdmin(actor, user.id);
  const teams = await ctx.db
    .selectFrom('teams')
    .innerJoin('team_members', 'team_members.team_id', 'teams.id')
    .selectAll('teams')
    .where('team_members.user_id', '=', user.id)
    .orderBy('teams.slug')
    .execute();
  const projects = await projectsOfUser(ctx.db, user.id);
  return {
    ...toUserView(user),
    teams: teams.map(toTeamView),
    projects: projects.map(({ id, slug, role }) => ({ id, slug, role })),
  };
}
