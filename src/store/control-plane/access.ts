/**
 * Who may do what, checked by every operation itself so the admin API, the CLI and the bootstrap file
 * share one set of rules:
 * - the instance administrator may do everything;
 * - members of a project's owning team manage that project (settings, upstreams, keys, direct members,
 *   deletion) and their team's membership, and may create projects owned by their team;
 * - direct project members may call the project but manage nothing;
 * - every user manages their own tokens and their own upstream authorizations.
 * A user refused on a project they tried to manage leaves an `access.denied` record on its trail.
 * Also here: resolving what callers name (id, slug or handle) to rows, a `not_found` when nothing is;
 * who is a member of a team or a project, and which projects a user may call.
 */
import type { Database, ProjectsTable, TeamsTable, UsersTable } from '../schema';
import { auditBy } from './audit';
import type { Db, StoreContext } from './context';
import { ControlPlaneError } from './errors';
import type { Principal, ProjectRecord } from './types';

export function requireAdmin(actor: Principal): void {
  if (actor.kind !== 'admin') throw new ControlPlaneError('forbidden', 'Only the administrator may do this');
}

export function requireUser(actor: Principal): string {
  if (actor.kind !== 'user')
    throw new ControlPlaneError('forbidden', 'Only users and the administrator may do this');
  return actor.userId;
}

export function requireSelfOrAdmin(actor: Principal, userId: string): void {
  if (actor.kind === 'admin') return;
  if (actor.kind === 'user' && actor.userId === userId) return;
  throw new ControlPlaneError('forbidden', 'Only the user themselves or the administrator may do this');
}

export async function requireTeamRights(ctx: StoreContext, actor: Principal, teamId: string): Promise<void> {
  if (actor.kind === 'admin') return;
  if (actor.kind === 'user' && (await isTeamMember(ctx.db, actor.userId, teamId))) return;
  throw new ControlPlaneError('forbidden', 'Only members of the team or the administrator may do this');
}

/** The project row if `actor` manages it; forbidden attempts by users are audited. */
export async function requireManagedProject(
  ctx: StoreContext,
  actor: Principal,
  ref: string,
): Promise<ProjectsTable> {
  const row = await requireProjectRow(ctx.db, ref);
  if (actor.kind === 'admin') return row;
  if (actor.kind === 'user' && (await isTeamMember(ctx.db, actor.userId, row.team_id))) return row;
  throw await forbidden(ctx, actor, row.id, 'project.manage');
}

/** Records the refusal on the project's trail and returns the error to throw. */
export async function forbidden(
  ctx: StoreContext,
  actor: Principal,
  projectId: string,
  attempted: string,
): Promise<ControlPlaneError> {
  await auditBy(ctx, ctx.db, actor, projectId, 'access.denied', { attempted });
  return new ControlPlaneError(
    'forbidden',
    "Only members of the project's team or the administrator may do this",
  );
}

export async function canCallProject(
  ctx: StoreContext,
  principal: Principal,
  project: ProjectRecord,
): Promise<boolean> {
  // An API key is a credential of one project: presented elsewhere it is refused, even where
  // anonymous callers are welcome, so a misrouted key never silently acts as someone else.
  if (principal.kind === 'api_key') {
    if (principal.projectId !== project.id) return false;
    const key = await ctx.db
      .selectFrom('api_keys')
      .select('id')
      .where('id', '=', principal.keyId)
      .where('project_id', '=', project.id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return key !== undefined;
  }
  if (project.authMode === 'anonymous') return true;
  if (principal.kind !== 'user') return false;
  return isTeamMemberOrDirect(ctx.db, principal.userId, project);
}

export async function canManageProject(
  ctx: StoreContext,
  principal: Principal,
  project: ProjectRecord,
): Promise<boolean> {
  if (principal.kind === 'admin') return true;
  if (principal.kind !== 'user') return false;
  return isTeamMember(ctx.db, principal.userId, project.teamId);
}

/** A user's role on a project for the dashboard: `team` (member of its team), `member` (direct), or none. */
export async function projectRole(
  ctx: StoreContext,
  userId: string,
  project: ProjectRecord,
): Promise<'team' | 'member' | undefined> {
  if (await isTeamMember(ctx.db, userId, project.teamId)) return 'team';
  return (await isTeamMemberOrDirect(ctx.db, userId, project)) ? 'member' : undefined;
}

export async function isTeamMember(db: Db, userId: string, teamId: string): Promise<boolean> {
  return (await membership(db, { table: 'team_members', key: 'team_id', id: teamId }, userId)) !== undefined;
}

export async function isTeamMemberOrDirect(db: Db, userId: string, project: { id: string; teamId: string }) {
  if (await isTeamMember(db, userId, project.teamId)) return true;
  const direct = { table: 'project_members', key: 'project_id', id: project.id } as const;
  return (await membership(db, direct, userId)) !== undefined;
}

/** A project a user may call (projectsOfUser). */
export interface UserProject {
  id: string;
  slug: string;
  /** The owning team's slug. */
  team: string;
  deletingAt: string | null;
  /** `team`: they are a member of its team (which wins); `direct`: a direct member of the project. */
  role: 'team' | 'direct';
}

/** The projects a user may call, through their teams or as a direct member, by slug. */
export async function projectsOfUser(db: Db, userId: string): Promise<UserProject[]> {
  const projects = db
    .selectFrom('projects')
    .innerJoin('teams', 'teams.id', 'projects.team_id')
    .select(['projects.id', 'projects.slug', 'teams.slug as team', 'projects.deleting_at']);
  const viaTeam = await projects
    .innerJoin('team_members', 'team_members.team_id', 'projects.team_id')
    .where('team_members.user_id', '=', userId)
    .execute();
  const direct = await projects
    .innerJoin('project_members', 'project_members.project_id', 'projects.id')
    .where('project_members.user_id', '=', userId)
    .execute();
  const byId = new Map<string, UserProject>();
  const add = (p: (typeof direct)[number], role: UserProject['role']) =>
    byId.set(p.id, { id: p.id, slug: p.slug, team: p.team, deletingAt: p.deleting_at ?? null, role });
  for (const p of direct) add(p, 'direct');
  for (const p of viaTeam) add(p, 'team');
  return [...byId.values()].sort((a, b) => a.slug.localeCompare(b.slug));
}

/** A membership table and whose members it lists: the key column names the team or the project. */
export type Members =
  | { table: 'team_members'; key: 'team_id'; id: string }
  | { table: 'project_members'; key: 'project_id'; id: string };

/** The user's row in the set (when they joined), if they are a member. */
export function membership(db: Db, members: Members, userId: string) {
  return db
    .selectFrom(members.table)
    .select('created_at')
    .where(members.key, '=', members.id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

export function requireTeam(db: Db, ref: string): Promise<TeamsTable> {
  return requireByRef(db, 'teams', ref);
}

export function requireUserRow(db: Db, ref: string): Promise<UsersTable> {
  return requireByRef(db, 'users', ref);
}

export function requireProjectRow(db: Db, ref: string): Promise<ProjectsTable> {
  return requireByRef(db, 'projects', ref);
}

/** What callers name a team, user or project by besides its id, and what `not_found` calls it. */
const NAMED_BY = {
  teams: { column: 'slug', noun: 'team' },
  users: { column: 'handle', noun: 'user' },
  projects: { column: 'slug', noun: 'project' },
} as const;

async function requireByRef<T extends keyof typeof NAMED_BY>(
  db: Db,
  table: T,
  ref: string,
): Promise<Database[T]> {
  const { column, noun } = NAMED_BY[table];
  const row = await db
    .selectFrom(table as keyof typeof NAMED_BY)
    .selectAll()
    .where((eb) => eb.or([eb('id', '=', ref), eb(column, '=', ref)]))
    .executeTakeFirst();
  if (!row) throw new ControlPlaneError('not_found', `No ${noun} "${ref}"`);
  return row as Database[T];
}
