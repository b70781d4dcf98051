/**
 * Deleting a project (docs/retention.md) happens in two steps. `markProjectDeleting` starts it: from
 * then on the project no longer serves and its API keys no longer authenticate, and the deletion
 * workflow stops its tasks and removes their data. `deleteProject` ends it: the project's control-plane
 * rows go in one transaction (authorizations, upstreams with their credentials, keys, direct members,
 * the project), then `onProjectDeleted` runs. The audit trail stays.
 */
import { requireManagedProject } from './access';
import { auditBy } from './audit';
import type { StoreContext } from './context';
import { toProjectRecord } from './projects';
import type { Principal, ProjectRecord } from './types';

/** Starts a project's deletion. Idempotent. */
export async function markProjectDeleting(
  ctx: StoreContext,
  actor: Principal,
  ref: string,
): Promise<ProjectRecord> {
  const row = await requireManagedProject(ctx, actor, ref);
  if (row.deleting_at === null || row.deleting_at === undefined) {
    await ctx.transaction(async (trx) => {
      await trx.updateTable('projects').set({ deleting_at: ctx.nowIso() }).where('id', '=', row.id).execute();
      await auditBy(ctx, trx, actor, row.id, 'project.deletion_started', { slug: row.slug });
    });
  }
  return toProjectRecord(ctx.db, row);
}

/** Ids of projects whose deletion started (to resume deletions at start-up). */
export async function projectsBeingDeleted(ctx: StoreContext): Promise<string[]> {
  const rows = await ctx.db
    .selectFrom('projects')
    .select('id')
    .where('deleting_at', 'is not', null)
    .execute();
  return rows.map((r) => r.id);
}

/** Deletes the project's control-plane rows (settings, members, keys, upstreams, authorizations). */
export async function deleteProject(
  ctx: StoreContext,
  actor: Principal,
  ref: string,
): Promise<ProjectRecord> {
  const row = await requireManagedProject(ctx, actor, ref);
  const record = await toProjectRecord(ctx.db, row);
  await ctx.transaction(async (trx) => {
    const upstreamIds = trx.selectFrom('upstreams').select('id').where('project_id', '=', row.id);
    await trx.deleteFrom('upstream_authorizations').where('upstream_id', 'in', upstreamIds).execute();
    await trx.deleteFrom('upstream_token_exchange').where('upstream_id', 'in', upstreamIds).execute();
    await trx.deleteFrom('upstreams').where('project_id', '=', row.id).execute();
    await trx.deleteFrom('api_keys').where('project_id', '=', row.id).execute();
    await trx.deleteFrom('project_members').where('project_id', '=', row.id).execute();
    await trx.deleteFrom('projects').where('id', '=', row.id).execute();
    await auditBy(ctx, trx, actor, row.id, 'project.deleted', { slug: row.slug });
  });
  await ctx.options.onProjectDeleted?.(record);
  return record;
}
