/**
 * Who belongs where: a team's members, who manage the team and its projects, and a project's direct
 * members, who may call it and nothing more. Both are the same kind of set (rows of team or project,
 * user, since), so one set of functions serves both; what differs is who may change the set (team
 * rights, or managing the project), how it is named in errors, and where a change is audited (a team
 * change reaches every project's trail). Adding a member twice changes nothing; removing a user who is
 * not a member is `not_found`.
 */
import type { Members } from './access';
import { membership, requireManagedProject, requireTeam, requireTeamRights, requireUserRow } from './access';
import { auditBy, writeTeamAudit } from './audit';
import type { Db, StoreContext } from './context';
import { ControlPlaneError } from './errors';
import type { Principal } from './types';
import type { MemberView, Updated } from './views';
import { toUserView } from './views';

/** A set of members as an operation changes it: how to name it, and how to audit a change to it. */
type MemberSet = Members & {
  /** `a member of team "core"`, as in `User "ada" is not a member of team "core"`. */
  label: string;
  audit(trx: Db, change: 'member_added' | 'member_removed', detail: Record<string, unknown>): Promise<void>;
};

/** Whose members: a team's, or a project's direct members (each by slug or id). */
export type MembersOf = { team: string } | { project: string };

/** Adds the user to the set; already a member, nothing changes. */
export async function addMember(
  ctx: StoreContext,
  actor: Principal,
  of: MembersOf,
  userRef: string,
): Promise<Updated<MemberView>> {
  const set = await memberSet(ctx, actor, of);
  const user = await requireUserRow(ctx.db, userRef);
  return ctx.transaction(async (trx) => {
    const existing = await membership(trx, set, user.id);
    if (existing) return { record: { ...toUserView(user), since: existing.created_at }, changed: false };
    const since = ctx.nowIso();
    await trx
      .insertInto(set.table)
      .values({ ...keyColumn(set), user_id: user.id, created_at: since })
      .execute();
    await set.audit(trx, 'member_added', { userId: user.id, handle: user.handle });
    return { record: { ...toUserView(user), since }, changed: true };
  });
}

export async function removeMember(
  ctx: StoreContext,
  actor: Principal,
  of: MembersOf,
  userRef: string,
): Promise<void> {
  const set = await memberSet(ctx, actor, of);
  const user = await requireUserRow(ctx.db, userRef);
  await ctx.transaction(async (trx) => {
    const deleted = await trx
      .deleteFrom(set.table)
      .where(set.key, '=', set.id)
      .where('user_id', '=', user.id)
      .executeTakeFirst();
    if (Number(deleted.numDeletedRows) === 0) {
      throw new ControlPlaneError('not_found', `User "${user.handle}" is not ${set.label}`);
    }
    await set.audit(trx, 'member_removed', { userId: user.id, handle: user.handle });
  });
}

export async function listProjectMembers(
  ctx: StoreContext,
  actor: Principal,
  projectRef: string,
): Promise<MemberView[]> {
  const project = await requireManagedProject(ctx, actor, projectRef);
  return listMembers(ctx.db, { table: 'project_members', key: 'project_id', id: project.id });
}

/** The members, by handle, each with the time they joined. */
export async function listMembers(db: Db, members: Members): Promise<MemberView[]> {
  const rows = await db
    .selectFrom(members.table)
    .innerJoin('users', 'users.id', `${members.table}.user_id`)
    .selectAll('users')
    .select(`${members.table}.created_at as since`)
    .where(members.key, '=', members.id)
    .orderBy('users.handle')
    .execute();
  return rows.map((r) => ({ ...toUserView(r), since: r.since }));
}

/** The set `actor` is about to change, once they are found to have the right to. */
async function memberSet(ctx: StoreContext, actor: Principal, of: MembersOf): Promise<MemberSet> {
  if ('team' in of) {
    const team = await requireTeam(ctx.db, of.team);
    await requireTeamRights(ctx, actor, team.id);
    return {
      table: 'team_members',
      key: 'team_id',
      id: team.id,
      label: `a member of team "${team.slug}"`,
      audit: (trx, change, detail) => writeTeamAudit(ctx, trx, actor, team.id, `team.${change}`, detail),
    };
  }
  const project = await requireManagedProject(ctx, actor, of.project);
  return {
    table: 'project_members',
    key: 'project_id',
    id: project.id,
    label: `a direct member of project "${project.slug}"`,
    audit: (trx, change, detail) => auditBy(ctx, trx, actor, project.id, `project.${change}`, detail),
  };
}

/** The key column of a new row: the one place the two tables differ. */
function keyColumn(members: Members): { team_id: string } | { project_id: string } {
  return members.table === 'team_members' ? { team_id: members.id } : { project_id: members.id };
}
