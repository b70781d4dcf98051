/**
 * Teams: a slug unique on the instance and a display name. Only the administrator creates teams; a
 * team's members (and the administrator) see and rename it, and manage its membership
 * (memberships.ts). Users list only the teams they belong to.
 */
import { z } from 'zod';
import { requireAdmin, requireTeam, requireTeamRights, requireUser } from './access';
import { auditBy } from './audit';
import type { StoreContext } from './context';
import { insertUnique, newId } from './context';
import { listMembers } from './memberships';
import { NameSchema, parse, SlugSchema } from './schemas';
import type { Principal } from './types';
import type { MemberView, TeamView, Updated } from './views';
import { toTeamView } from './views';

export async function createTeam(
  ctx: StoreContext,
  actor: Principal,
  input: { slug: string; name: string },
): Promise<TeamView> {
  requireAdmin(actor);
  const { slug, name } = parse(z.strictObject({ slug: SlugSchema, name: NameSchema }), input);
  const row = { id: newId('team'), slug, name, created_at: ctx.nowIso() };
  await ctx.transaction(async (trx) => {
    await insertUnique(trx.insertInto('teams').values(row), `Team "${slug}" already exists`);
    await auditBy(ctx, trx, actor, null, 'team.created', { teamId: row.id, slug });
  });
  return toTeamView(row);
}

export async function updateTeam(
  ctx: StoreContext,
  actor: Principal,
  ref: string,
  input: { name?: string },
): Promise<Updated<TeamView>> {
  const { name } = parse(z.strictObject({ name: NameSchema.optional() }), input);
  const team = await requireTeam(ctx.db, ref);
  await requireTeamRights(ctx, actor, team.id);
  if (name === undefined || name === team.name) return { record: toTeamView(team), changed: false };
  await ctx.transaction(async (trx) => {
    await trx.updateTable('teams').set({ name }).where('id', '=', team.id).execute();
    await auditBy(ctx, trx, actor, null, 'team.updated', { teamId: team.id });
  });
  return { record: toTeamView({ ...team, name }), changed: true };
}

/** Admin: every team; a user: the teams they belong to. */
export async function listTeams(ctx: StoreContext, actor: Principal): Promise<TeamView[]> {
  let q = ctx.db.selectFrom('teams').selectAll('teams').orderBy('teams.slug');
  if (actor.kind !== 'admin') {
    const userId = requireUser(actor);
    q = q
      .innerJoin('team_members', 'team_members.team_id', 'teams.id')
      .where('team_members.user_id', '=', userId);
  }
  return (await q.execute()).map(toTeamView);
}

export async function getTeam(
  ctx: StoreContext,
  actor: Principal,
  ref: string,
): Promise<TeamView & { members: MemberView[] }> {
  const team = await requireTeam(ctx.db, ref);
  await requireTeamRights(ctx, actor, team.id);
  const members = await listMembers(ctx.db, { table: 'team_members', key: 'team_id', id: team.id });
  return { ...toTeamView(team), members };
}
