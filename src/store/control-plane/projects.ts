/**
 * Projects and their settings: owned by one team, addressed by a slug unique on the instance. Team
 * members create their team's projects and manage them; moving a project to another team needs rights
 * on that team too. An update merges `cache`, `limits` and `features` into the current values, writes
 * only when something changed, and lets the gateway veto a change that would make the project
 * unservable (`validateProject`). Deleting a project is deletion.ts.
 */
import { approvalPolicyOf } from './approval-policies';
import type { CacheConfig, LimitsConfig } from '../../config/config';
import { CacheConfigSchema, LimitsConfigSchema, projectAnswerLimitProblems } from '../../config/config';
import type { ProjectsTable } from '../schema';
import type { ListKind } from '../sessions/upstream-events';
import { requireManagedProject, requireTeam, requireTeamRights, requireUser } from './access';
import { auditBy } from './audit';
import type { Db, StoreContext } from './context';
import { insertUnique, newId } from './context';
import { ControlPlaneError } from './errors';
import { announceListChanges } from './list-changes';
import type { NewProject, ProjectPatch } from './schemas';
import { NewProjectSchema, parse, ProjectPatchSchema } from './schemas';
import type { Principal, ProjectRecord, ToolProfile } from './types';
import { toUpstreamRecord, toUpstreamView, upstreamRows } from './upstreams';
import type { ProjectView, Updated } from './views';

export async function createProject(
  ctx: StoreContext,
  actor: Principal,
  input: NewProject,
): Promise<ProjectView> {
  const p = parse(NewProjectSchema, input);
  checkAnswerLimits(ctx, p.limits);
  const team = await requireTeam(ctx.db, p.team);
  await requireTeamRights(ctx, actor, team.id);
  const now = ctx.nowIso();
  const row: ProjectsTable = {
    id: newId('prj'),
    slug: p.slug,
    team_id: team.id,
    auth_mode: p.authMode,
    tool_profile: p.toolProfile,
    features: JSON.stringify(p.features),
    namespacing: p.namespacing ? 1 : 0,
    cache: JSON.stringify(p.cache),
    limits: JSON.stringify(p.limits),
    created_at: now,
    updated_at: now,
  };
  await ctx.transaction(async (trx) => {
    await insertUnique(trx.insertInto('projects').values(row), `Project "${p.slug}" already exists`);
    await auditBy(ctx, trx, actor, row.id, 'project.created', { slug: p.slug, teamId: team.id });
  });
  return toProjectView(ctx.db, row, actor);
}

/** Admin: every project; a user: the projects of their teams (the ones they manage). */
export async function listProjects(ctx: StoreContext, actor: Principal): Promise<ProjectView[]> {
  let q = ctx.db.selectFrom('projects').selectAll('projects').orderBy('projects.slug');
  if (actor.kind !== 'admin') {
    const userId = requireUser(actor);
    q = q
      .innerJoin('team_members', 'team_members.team_id', 'projects.team_id')
      .where('team_members.user_id', '=', userId);
  }
  const rows = await q.execute();
  return Promise.all(rows.map((r) => toProjectView(ctx.db, r, actor)));
}

export async function getProject(ctx: StoreContext, actor: Principal, ref: string): Promise<ProjectView> {
  const row = await requireManagedProject(ctx, actor, ref);
  return toProjectView(ctx.db, row, actor);
}

export async function updateProject(
  ctx: StoreContext,
  actor: Principal,
  ref: string,
  patchInput: ProjectPatch,
): Promise<Updated<ProjectView>> {
  const patch = parse(ProjectPatchSchema, patchInput);
  const row = await requireManagedProject(ctx, actor, ref);
  const current = await toProjectRecord(ctx.db, row);
  let teamId = row.team_id;
  if (patch.team !== undefined) {
    const team = await requireTeam(ctx.db, patch.team);
    // Moving a project hands it to another team: the actor must belong to that team as well.
    if (team.id !== row.team_id) await requireTeamRights(ctx, actor, team.id);
    teamId = team.id;
  }
  const cache = parse(CacheConfigSchema, { ...current.cache, ...patch.cache }, 'cache');
  const limits = parse(LimitsConfigSchema, { ...current.limits, ...patch.limits }, 'limits');
  checkAnswerLimits(ctx, limits);
  const next: ProjectsTable = {
    ...row,
    team_id: teamId,
    auth_mode: patch.authMode ?? row.auth_mode,
    tool_profile: patch.toolProfile ?? row.tool_profile,
    features: JSON.stringify({ ...current.features, ...stripUndefined(patch.features ?? {}) }),
    namespacing: (patch.namespacing ?? current.namespacing) ? 1 : 0,
    cache: JSON.stringify(cache),
    limits: JSON.stringify(limits),
  };
  const changedFields = (
    ['team_id', 'auth_mode', 'tool_profile', 'features', 'namespacing', 'cache', 'limits'] as const
  ).filter((k) => next[k] !== row[k]);
  if (changedFields.length === 0) return { record: await toProjectView(ctx.db, row, actor), changed: false };
  if (next.namespacing === 0 && row.namespacing === 1)
    await validate(ctx, { ...current, namespacing: false });
  next.updated_at = ctx.nowIso();
  await ctx.transaction(async (trx) => {
    await trx
      .updateTable('projects')
      .set({
        team_id: next.team_id,
        auth_mode: next.auth_mode,
        tool_profile: next.tool_profile,
        features: next.features,
        namespacing: next.namespacing,
        cache: next.cache,
        limits: next.limits,
        updated_at: next.updated_at,
      })
      .where('id', '=', row.id)
      .execute();
    await auditBy(ctx, trx, actor, row.id, 'project.updated', {
      fields: changedFields.map(camel),
      ...(teamId !== row.team_id && { teamId }),
    });
    const kinds = exposedListsChanged(changedFields);
    if (kinds.length > 0) await announceListChanges(trx, { projectId: row.id, kinds });
  });
  return { record: await toProjectView(ctx.db, next, actor), changed: true };
}

/**
 * The lists whose content a project change reshapes: the tool profile and the tasks feature decide how
 * tools are offered (task support), namespacing renames tools and prompts (resources keep their URIs).
 */
function exposedListsChanged(columns: readonly string[]): ListKind[] {
  const kinds = new Set<ListKind>();
  if (columns.includes('tool_profile') || columns.includes('features')) kinds.add('tools');
  if (columns.includes('namespacing')) {
    kinds.add('tools');
    kinds.add('prompts');
  }
  return [...kinds];
}

/**
 * A project may only lower the instance's answer bounds: a higher value is refused, naming the field and
 * the instance setting, rather than silently clamped (the manager would believe in a bound that is not).
 */
function checkAnswerLimits(ctx: StoreContext, limits: LimitsConfig): void {
  const ceilings = ctx.options.answerLimitCeilings;
  if (!ceilings) return;
  const problems = projectAnswerLimitProblems(limits, ceilings);
  if (problems.length > 0) throw new ControlPlaneError('invalid', problems.map((p) => p.message).join('; '));
}

/** The gateway's veto (`validateProject`), reported as `invalid` with its reason. */
async function validate(ctx: StoreContext, project: ProjectRecord): Promise<void> {
  if (!ctx.options.validateProject) return;
  try {
    await ctx.options.validateProject(project);
  } catch (err) {
    throw new ControlPlaneError('invalid', err instanceof Error ? err.message : String(err));
  }
}

/** A project as the gateway serves it, with its upstreams. */
export async function toProjectRecord(db: Db, row: ProjectsTable): Promise<ProjectRecord> {
  const upstreams = await upstreamRows(db, row.id);
  return {
    ...projectSettings(row),
    upstreams: upstreams.map(toUpstreamRecord),
  };
}

async function toProjectView(db: Db, row: ProjectsTable, viewer: Principal): Promise<ProjectView> {
  const [team, upstreams] = await Promise.all([
    db.selectFrom('teams').select('slug').where('id', '=', row.team_id).executeTakeFirst(),
    upstreamRows(db, row.id),
  ]);
  return {
    ...projectSettings(row),
    teamSlug: team?.slug ?? '',
    upstreams: upstreams.map((u) => toUpstreamView(u, viewer)),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function projectSettings(row: ProjectsTable): Omit<ProjectRecord, 'upstreams'> {
  const features = JSON.parse(row.features) as { tasks?: boolean };
  return {
    id: row.id,
    slug: row.slug,
    teamId: row.team_id,
    authMode: row.auth_mode === 'anonymous' ? 'anonymous' : 'required',
    toolProfile: row.tool_profile as ToolProfile,
    features: { tasks: features.tasks ?? true },
    namespacing: Number(row.namespacing) !== 0,
    // Parsed so settings added to the schemas later get their defaults on old rows.
    cache: CacheConfigSchema.parse(JSON.parse(row.cache)) as CacheConfig,
    limits: LimitsConfigSchema.parse(JSON.parse(row.limits)) as LimitsConfig,
    ...withApprovals(row),
  };
}

function withApprovals(row: ProjectsTable): Pick<ProjectRecord, 'approvals'> {
  const approvals = approvalPolicyOf(row);
  return approvals ? { approvals } : {};
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Column names as the audit record lists changed fields. */
const FIELD_NAMES: Record<string, string> = {
  team_id: 'team',
  auth_mode: 'authMode',
  tool_profile: 'toolProfile',
  features: 'features',
  namespacing: 'namespacing',
  cache: 'cache',
  limits: 'limits',
};
function camel(column: string): string {
  return FIELD_NAMES[column] ?? column;
}
