/**
 * The `upstream_events` feed: list changes upstreams announced, carried from the replica that watches
 * an upstream to every replica holding listen streams for its project.
 *
 * Several replicas may have listeners for the same upstream and credential (scope); only the holder of
 * the scope's lease (`upstream_watches`) watches it, so each announcement is written once. The holder
 * renews the lease while it watches and gives it up when its last listener leaves; a replica that dies
 * holding it loses it when it expires, and another replica with listeners takes it over.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../schema';

export type ListKind = 'tools' | 'prompts' | 'resources';

export const LIST_KINDS: readonly ListKind[] = ['tools', 'prompts', 'resources'];

/**
 * The scope of a change made through the control plane (an upstream added, removed, disabled or
 * re-pointed; the project's exposed tools changed): every listen stream of the project may be told.
 * Never a catalog cache key (those are `upstreamId#…` or a URL), so it cannot be mistaken for a watch.
 */
export const CONTROL_PLANE_SCOPE = 'control-plane';

/** The scope of a control-plane change of one user's own lists (their `per_user` authorization). */
export function userControlPlaneScope(userId: string): string {
  return `${CONTROL_PLANE_SCOPE}:user:${userId}`;
}

/** Whether a row's scope is a control-plane change rather than an upstream's own announcement. */
export function isControlPlaneScope(scope: string): boolean {
  return scope === CONTROL_PLANE_SCOPE || scope.startsWith(`${CONTROL_PLANE_SCOPE}:`);
}

/**
 * Writes list-change rows with `db`, which may be a control-plane transaction: the rows then commit
 * with the change they announce, or not at all. Rows older than KEEP_MS go meanwhile.
 */
export async function insertListChanges(
  db: Kysely<Database>,
  rows: readonly Omit<UpstreamEvent, 'id'>[],
  now: number,
): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('upstream_events')
    .values(
      rows.map((e) => ({
        project_id: e.projectId,
        upstream_id: e.upstreamId,
        scope: e.scope,
        kind: e.kind,
        at_ms: now,
      })),
    )
    .execute();
  await db
    .deleteFrom('upstream_events')
    .where('at_ms', '<', now - KEEP_MS)
    .execute();
}

export interface UpstreamEvent {
  id: number;
  projectId: string;
  upstreamId: string;
  scope: string;
  kind: ListKind;
}

/** Rows older than this are deleted as new ones are written: they only bridge replicas' polls. */
const KEEP_MS = 10 * 60_000;

export class UpstreamEvents {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Takes or renews the lease on watching `scope` for `ttlMs`. `mine`: whether `holder` holds it now (the
   * update is one statement, so two replicas never both win an expired lease); `othersUntil`: when the
   * lease of another holder it replaced ended (released or expired), so the new holder knows whether
   * the scope went unwatched while it was waiting.
   */
  async claimWatch(
    scope: string,
    holder: string,
    ttlMs: number,
  ): Promise<{ mine: boolean; othersUntil?: number }> {
    const now = this.now();
    const before = await this.db
      .selectFrom('upstream_watches')
      .select(['holder', 'expires_at_ms'])
      .where('scope', '=', scope)
      .executeTakeFirst();
    await this.db
      .insertInto('upstream_watches')
      .values({ scope, holder, expires_at_ms: now + ttlMs })
      .onConflict((oc) => oc.column('scope').doNothing())
      .execute();
    const updated = await this.db
      .updateTable('upstream_watches')
      .set({ holder, expires_at_ms: now + ttlMs })
      .where('scope', '=', scope)
      .where((eb) => eb.or([eb('holder', '=', holder), eb('expires_at_ms', '<=', now)]))
      .executeTakeFirst();
    const mine = Number(updated.numUpdatedRows) > 0;
    return before && before.holder !== holder
      ? { mine, othersUntil: Number(before.expires_at_ms) }
      : { mine };
  }

  /**
   * Gives the lease up (the holder's last listener left), so another replica need not wait it out; the
   * row stays, saying when it ended, for the next holder.
   */
  async releaseWatch(scope: string, holder: string): Promise<void> {
    await this.db
      .updateTable('upstream_watches')
      .set({ expires_at_ms: this.now() })
      .where('scope', '=', scope)
      .where('holder', '=', holder)
      .execute();
  }

  /** Records a change the upstream announced. */
  async record(e: Omit<UpstreamEvent, 'id'>): Promise<void> {
    await insertListChanges(this.db, [e], this.now());
  }

  /** Rows written after `afterId`, oldest first. */
  async after(afterId: number, limit = 500): Promise<UpstreamEvent[]> {
    const rows = await this.db
      .selectFrom('upstream_events')
      .select(['id', 'project_id', 'upstream_id', 'scope', 'kind'])
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      id: Number(r.id),
      projectId: r.project_id,
      upstreamId: r.upstream_id,
      scope: r.scope,
      kind: r.kind as ListKind,
    }));
  }

  /** The newest row's id (0 when there is none): where a new feed starts. */
  async latestId(): Promise<number> {
    const row = await this.db
      .selectFrom('upstream_events')
      .select((eb) => eb.fn.max('id').as('id'))
      .executeTakeFirst();
    return Number(row?.id ?? 0);
  }
}
