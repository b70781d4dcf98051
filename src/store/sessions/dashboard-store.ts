/**
 * What the project dashboard reads and writes besides tasks: sign-in sessions, which projects a user sees
 * and in which role, and the people a task can be assigned to. Roles follow the table in
 * docs/dashboard.md: a member of the project's team (`team`) or a direct project member (`member`); a
 * user's role on one project comes from `ControlPlaneStore.projectRole`.
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { projectsOfUser } from '../control-plane/access';
import type { ProjectRecord } from '../control-plane/types';
import type { Database } from '../schema';
import { hashToken } from '../control-plane/tokens';

export type ProjectRole = 'team' | 'member';

export interface DashboardUser {
  id: string;
  handle: string;
  name: string;
}

export interface DashboardProject {
  slug: string;
  team: string;
  role: ProjectRole;
}

export interface Session {
  user: DashboardUser;
  csrfToken: string;
  expiresAt: string;
}

export interface DashboardStoreOptions {
  /** Session lifetime (default 12 h); a session also ends with the token it was opened with. */
  sessionTtlMs?: number;
  now?: () => Date;
}

const DEFAULT_SESSION_TTL_MS = 12 * 60 * 60 * 1000;

export class DashboardStore {
  private readonly now: () => Date;
  private readonly sessionTtlMs: number;

  constructor(
    private readonly db: Kysely<Database>,
    options: DashboardStoreOptions = {},
  ) {
    this.now = options.now ?? (() => new Date());
    this.sessionTtlMs = options.sessionTtlMs ?? DEFAULT_SESSION_TTL_MS;
  }

  // ── sessions ─────────────────────────────────────────────────────────────────────────────────────

  /**
   * Opens a session for a user whose personal access token `tokenId` was just checked (it ends with that
   * token), or who signed in through an OpenID issuer (`tokenId` is the external identity's id). Returns the cookie secret (never stored: only its SHA-256 is) and the session.
   */
  async openSession(
    user: DashboardUser,
    token: { tokenId: string; expiresAt: string | null },
  ): Promise<{ secret: string; session: Session }> {
    const now = this.now();
    const secret = randomBytes(32).toString('base64url');
    const csrfToken = randomBytes(24).toString('base64url');
    let expiresAt = new Date(now.getTime() + this.sessionTtlMs).toISOString();
    if (token.expiresAt !== null && token.expiresAt < expiresAt) expiresAt = token.expiresAt;
    await this.db
      .insertInto('dashboard_sessions')
      .values({
        id_hash: hashToken(secret),
        user_id: user.id,
        token_id: token.tokenId,
        csrf_token: csrfToken,
        created_at: now.toISOString(),
        expires_at: expiresAt,
      })
      .execute();
    // Opportunistic clean-up: sessions are short-lived and few.
    await this.db.deleteFrom('dashboard_sessions').where('expires_at', '<=', now.toISOString()).execute();
    return { secret, session: { user, csrfToken, expiresAt } };
  }

  /** The live session for a cookie secret: unexpired, and its token neither revoked nor expired. */
  async session(secret: string): Promise<Session | undefined> {
    if (secret.length > 128) return undefined;
    const now = this.now().toISOString();
    const row = await this.db
      .selectFrom('dashboard_sessions')
      // A session stands on the user token it was opened with, or on the external identity of a
      // sign-in through the OpenID issuer (docs/oauth.md): it ends when that token or link goes.
      .leftJoin('user_tokens', 'user_tokens.id', 'dashboard_sessions.token_id')
      .leftJoin('external_identities', 'external_identities.id', 'dashboard_sessions.token_id')
      .innerJoin('users', 'users.id', 'dashboard_sessions.user_id')
      .select([
        'dashboard_sessions.csrf_token',
        'dashboard_sessions.expires_at',
        'user_tokens.id as token_id',
        'user_tokens.revoked_at',
        'user_tokens.expires_at as token_expires_at',
        'external_identities.user_id as identity_user_id',
        'users.id',
        'users.handle',
        'users.name',
      ])
      .where('dashboard_sessions.id_hash', '=', hashToken(secret))
      .executeTakeFirst();
    if (!row || row.expires_at <= now) return undefined;
    if (row.token_id !== null) {
      if (row.revoked_at !== null) return undefined;
      if (row.token_expires_at !== null && row.token_expires_at <= now) return undefined;
    } else if (row.identity_user_id !== row.id) return undefined;
    return {
      user: { id: row.id, handle: row.handle, name: row.name },
      csrfToken: row.csrf_token,
      expiresAt: row.expires_at,
    };
  }

  async signOut(secret: string): Promise<void> {
    await this.db.deleteFrom('dashboard_sessions').where('id_hash', '=', hashToken(secret)).execute();
  }

  // ── people and roles ─────────────────────────────────────────────────────────────────────────────

  async user(userId: string): Promise<DashboardUser | undefined> {
    return this.db
      .selectFrom('users')
      .select(['id', 'handle', 'name'])
      .where('id', '=', userId)
      .executeTakeFirst();
  }

  /** The projects a user sees on the dashboard (not those being deleted), by slug. */
  async projectsOf(userId: string): Promise<DashboardProject[]> {
    const projects = await projectsOfUser(this.db, userId);
    return projects
      .filter((p) => p.deletingAt === null)
      .map((p) => ({ slug: p.slug, team: p.team, role: p.role === 'team' ? 'team' : 'member' }));
  }

  /** Everyone who can access the project (team members and direct members): who a task may go to. */
  async peopleOf(project: Pick<ProjectRecord, 'id' | 'teamId'>): Promise<DashboardUser[]> {
    const rows = await this.db
      .selectFrom('users')
      .select(['users.id', 'users.handle', 'users.name'])
      .where((eb) =>
        eb.or([
          eb(
            'users.id',
            'in',
            eb.selectFrom('team_members').select('user_id').where('team_id', '=', project.teamId),
          ),
          eb(
            'users.id',
            'in',
            eb.selectFrom('project_members').select('user_id').where('project_id', '=', project.id),
          ),
        ]),
      )
      .orderBy('users.handle')
      .execute();
    return rows;
  }

  /** Handles and names of the given users (unknown ids are left out). */
  async usersByIds(ids: string[]): Promise<Map<string, DashboardUser>> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('users')
      .select(['id', 'handle', 'name'])
      .where('id', 'in', unique)
      .execute();
    return new Map(rows.map((r) => [r.id, r]));
  }

  /** Slugs of the given teams (unknown ids are left out). */
  async teamsByIds(ids: string[]): Promise<Map<string, string>> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return new Map();
    const rows = await this.db.selectFrom('teams').select(['id', 'slug']).where('id', 'in', unique).execute();
    return new Map(rows.map((r) => [r.id, r.slug]));
  }
}
