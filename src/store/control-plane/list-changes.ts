/**
 * Control-plane changes announced as list changes: an upstream added, removed, enabled or disabled,
 * re-pointed or given another credential, a project's exposed tools reshaped (tool profile, the tasks
 * feature, namespacing), a user's own authorization for a `per_user` upstream granted or revoked. Each
 * writes `upstream_events` rows in the change's own transaction, so the rows exist exactly when the
 * change does, and every API replica's list feed (src/api/mcp/list-feed.ts) tells the project's listen
 * streams, after dropping what it cached of the project (docs/protocol-decisions.md, "Push").
 */
import type { ListKind } from '../sessions/upstream-events';
import { CONTROL_PLANE_SCOPE, insertListChanges, userControlPlaneScope } from '../sessions/upstream-events';
import type { Db } from './context';

export async function announceListChanges(
  trx: Db,
  change: {
    projectId: string;
    /** The upstream changed; absent for a project setting. */
    upstreamId?: string;
    /** Only this user's lists changed (their own authorization). */
    userId?: string;
    kinds: readonly ListKind[];
  },
): Promise<void> {
  const scope = change.userId === undefined ? CONTROL_PLANE_SCOPE : userControlPlaneScope(change.userId);
  await insertListChanges(
    trx,
    change.kinds.map((kind) => ({
      projectId: change.projectId,
      upstreamId: change.upstreamId ?? '',
      scope,
      kind,
    })),
    // The feed's clock, not the control plane's (tests inject that one): it only ages rows out.
    Date.now(),
  );
}
