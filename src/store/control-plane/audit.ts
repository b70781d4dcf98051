/**
 * Writing the audit trail. Every mutation records who did what in the same transaction as the change
 * (callers pass their transaction as `db`; the transaction bumps the control-plane generation, so the
 * change is served within the serving cache's check interval on every replica, see context.ts). Details
 * carry ids and names, never secrets. Reading the trail is audit-log.ts.
 */
import { randomBytes } from 'node:crypto';
import type { Db, StoreContext } from './context';
import type { AuditEvent, Principal } from './types';

/** How a principal is named in audit records (`user:<id>`, `admin:cli`, …). */
export function actorId(p: Principal): string {
  switch (p.kind) {
    case 'admin':
      return p.via ? `admin:${p.via}` : 'admin';
    case 'user':
      return `user:${p.userId}`;
    case 'api_key':
      return `api_key:${p.keyId}`;
    case 'anonymous':
      return 'anonymous';
  }
}

/** One event by `actor`, written in the caller's transaction. */
export async function auditBy(
  ctx: StoreContext,
  db: Db,
  actor: Principal,
  projectId: string | null,
  action: string,
  detail?: Record<string, unknown>,
): Promise<void> {
  await writeAudit(ctx, db, [{ projectId, actor: actorId(actor), action, ...(detail && { detail }) }]);
}

/**
 * A change to a team. Team membership decides access to every project of the team: the event goes to
 * each project's trail as well as to the instance trail.
 */
export async function writeTeamAudit(
  ctx: StoreContext,
  trx: Db,
  actor: Principal,
  teamId: string,
  action: string,
  detail: Record<string, unknown>,
): Promise<void> {
  const projects = await trx.selectFrom('projects').select('id').where('team_id', '=', teamId).execute();
  const base = { actor: actorId(actor), action, detail: { teamId, ...detail } };
  await writeAudit(ctx, trx, [
    { projectId: null, ...base },
    ...projects.map((p) => ({ projectId: p.id, ...base })),
  ]);
}

export async function writeAudit(ctx: StoreContext, db: Db, events: AuditEvent[]): Promise<void> {
  if (events.length === 0) return;
  const at = ctx.nowIso();
  await db
    .insertInto('audit_events')
    .values(
      events.map((e) => ({
        id: auditId(),
        at,
        project_id: e.projectId,
        actor: e.actor,
        action: e.action,
        detail: e.detail === undefined ? null : JSON.stringify(e.detail),
      })),
    )
    .execute();
}

let lastAuditMs = 0;
let auditSeq = 0;
/** Time-ordered audit ids: 12 hex digits of milliseconds, a per-process sequence, then randomness. */
function auditId(): string {
  const ms = Date.now();
  if (ms === lastAuditMs) auditSeq += 1;
  else {
    lastAuditMs = ms;
    auditSeq = 0;
  }
  return `${ms.toString(16).padStart(12, '0')}${auditSeq.toString(16).padStart(4, '0')}${randomBytes(6).toString('hex')}`;
}
