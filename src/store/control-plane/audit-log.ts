/**
 * Reading the audit trail (audit.ts writes it), newest first. A project's trail may be read by its
 * managers and the admin; the whole trail only by the admin, who can also still read the trail of a
 * deleted project by its id. A user refused a project's trail leaves an `access.denied` record on it.
 */
import { forbidden, isTeamMember, requireAdmin } from './access';
import type { StoreContext } from './context';
import { ControlPlaneError } from './errors';
import type { Principal } from './types';
import type { AuditRecord } from './views';

/**
 * Audit records, newest first. With a project: its managers (and the admin) may read them; without,
 * only the admin, who then sees every record.
 */
export async function listAudit(
  ctx: StoreContext,
  actor: Principal,
  opts: { project?: string; limit?: number; before?: string } = {},
): Promise<AuditRecord[]> {
  const limit = Math.min(Math.max(opts.limit ?? 100, 1), 1000);
  let q = ctx.db.selectFrom('audit_events').selectAll().orderBy('id', 'desc').limit(limit);
  if (opts.project !== undefined) {
    const projectId = await auditProjectId(ctx, actor, opts.project);
    q = q.where('project_id', '=', projectId);
  } else {
    requireAdmin(actor);
  }
  if (opts.before !== undefined) q = q.where('id', '<', opts.before);
  const rows = await q.execute();
  return rows.map((r) => ({
    id: r.id,
    at: r.at,
    projectId: r.project_id,
    actor: r.actor,
    action: r.action,
    detail: r.detail === null ? null : (JSON.parse(r.detail) as Record<string, unknown>),
  }));
}

/** The id of the project whose trail `actor` may read. */
async function auditProjectId(ctx: StoreContext, actor: Principal, ref: string): Promise<string> {
  const row = await ctx.db
    .selectFrom('projects')
    .select(['id', 'team_id'])
    .where((eb) => eb.or([eb('id', '=', ref), eb('slug', '=', ref)]))
    .executeTakeFirst();
  if (row) {
    if (actor.kind === 'admin') return row.id;
    if (actor.kind === 'user' && (await isTeamMember(ctx.db, actor.userId, row.team_id))) return row.id;
    throw await forbidden(ctx, actor, row.id, 'audit.list');
  }
  // A deleted project's trail stays readable by the admin, by project id.
  if (actor.kind === 'admin') return ref;
  throw new ControlPlaneError('not_found', `No project "${ref}"`);
}
