/**
 * The control plane over the store database (SQLite or PostgreSQL, portable Kysely only): teams, users
 * and their personal access tokens, projects with their settings, memberships, API keys, upstreams and
 * their credentials, per-user upstream authorizations, and the audit trail.
 *
 * Every administrative operation takes the acting principal and enforces the roles table itself, so the
 * admin API, the CLI and the bootstrap file share one set of rules:
 * - the instance administrator may do everything;
 * - members of a project's owning team manage that project (settings, upstreams, keys, direct members,
 *   deletion) and their team's membership, and may create projects owned by their team;
 * - direct project members may call the project but manage nothing;
 * - every user manages their own tokens and their own upstream authorizations.
 * Every mutation writes an audit record in the same transaction.
 *
 * Secrets: tokens and keys are stored as SHA-256 only; upstream credentials and user authorizations are
 * sealed with the store cipher, the associated data binding each ciphertext to its row.
 */
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { Cipher } from '../cipher';
import type {
  AuditEvent,
  ControlPlane,
  Principal,
  ProjectRecord,
  UpstreamCredential,
  UpstreamRecord,
} from './types';
import type { Database } from '../schema';
import { API_KEY_PREFIX, USER_TOKEN_PREFIX } from '../tokens';
import { ControlPlaneError } from './errors';
import { CredentialSchema, FutureTimestampSchema, parse } from './schemas';
import type { NewProject, NewUpstream, ProjectPatch, UpstreamPatch } from './schemas';
import type { ControlPlaneStoreOptions } from './context';
import { newId, StoreContext } from './context';
import { auditBy, writeAudit } from './audit';
import {
  canCallProject,
  canManageProject,
  forbidden,
  isTeamMember,
  isTeamMemberOrDirect,
  projectRole,
  requireAdmin,
  requireProjectRow,
  requireUserRow,
} from './access';
import type {
  ApiKeyView,
  AuditRecord,
  AuthorizationView,
  MemberView,
  ProjectView,
  TeamView,
  TokenView,
  Updated,
  UpstreamView,
  UserView,
} from './views';
import * as upstreams from './upstreams';
import * as projects from './projects';
import { toProjectRecord } from './projects';
import * as deletion from './deletion';
import * as teams from './teams';
import * as memberships from './memberships';
import * as users from './users';
import * as userTokens from './user-tokens';
import * as apiKeys from './api-keys';
import { apiKeyPrincipal } from './api-keys';
import { openUpstreamCredential, requireUpstreamRow, toAuth } from './upstreams';

export type { ControlPlaneStoreOptions } from './context';
export { newId } from './context';
export { actorId } from './audit';
export type * from './views';

export * from './errors';
export * from './schemas';

// ---------------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------------

/** How long a project read for an MCP request may be reused (changes made elsewhere show within it). */
const PROJECT_CACHE_MS = 1000;

export class ControlPlaneStore implements ControlPlane {
  private readonly ctx: StoreContext;

  constructor(db: Kysely<Database>, cipher: Cipher, options: ControlPlaneStoreOptions = {}) {
    this.ctx = new StoreContext(db, cipher, options);
  }

  // ------------------------------------------------------------------ ControlPlane (gateway side)

  async authenticate(token: string): Promise<Principal | undefined> {
    if (token.length > 512) return undefined;
    if (token.startsWith(USER_TOKEN_PREFIX)) {
      const user = await this.userToken(token);
      return user && { kind: 'user', userId: user.userId };
    }
    if (token.startsWith(API_KEY_PREFIX)) return apiKeyPrincipal(this.ctx, token);
    return undefined;
  }

  userToken(
    token: string,
  ): Promise<{ userId: string; tokenId: string; expiresAt: string | null } | undefined> {
    return userTokens.userToken(this.ctx, token);
  }

  /**
   * The project a request addresses. Read on every MCP request, so it is cached briefly: for
   * PROJECT_CACHE_MS, and dropped at once by any change written through this process (every mutation
   * writes an audit row). Who may call, tokens, keys and authorizations are never cached.
   */
  async projectBySlug(slug: string): Promise<ProjectRecord | undefined> {
    const hit = this.ctx.projectCache.get(slug);
    if (hit && hit.until > Date.now()) return hit.record;
    // A project being deleted no longer serves (docs/retention.md).
    const row = await this.ctx.db
      .selectFrom('projects')
      .selectAll()
      .where('slug', '=', slug)
      .where('deleting_at', 'is', null)
      .executeTakeFirst();
    const record = row ? await toProjectRecord(this.ctx.db, row) : undefined;
    this.ctx.projectCache.set(slug, { record, until: Date.now() + PROJECT_CACHE_MS });
    return record;
  }

  async projectById(id: string): Promise<ProjectRecord | undefined> {
    const row = await this.ctx.db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toProjectRecord(this.ctx.db, row) : undefined;
  }

  async canCallProject(principal: Principal, project: ProjectRecord): Promise<boolean> {
    return canCallProject(this.ctx, principal, project);
  }

  /** A user's role on a project for the dashboard: `team` (member of its team), `member` (direct), or none. */
  async projectRole(userId: string, project: ProjectRecord): Promise<'team' | 'member' | undefined> {
    return projectRole(this.ctx, userId, project);
  }

  async canManageProject(principal: Principal, project: ProjectRecord): Promise<boolean> {
    return canManageProject(this.ctx, principal, project);
  }

  async upstreamCredential(
    principal: Principal,
    project: ProjectRecord,
    upstream: UpstreamRecord,
  ): Promise<UpstreamCredential> {
    const name = `Upstream "${upstream.alias}"`;
    // No credential to look up: the (briefly cached) project record already says all that is needed.
    if (upstream.auth.mode === 'none' && upstream.enabled) {
      if (principal.kind !== 'admin' && !(await this.canCallProject(principal, project))) {
        return { ok: false, reason: `${name}: the caller may not call project "${project.slug}"` };
      }
      return { ok: true, headers: {}, authorizationId: null };
    }
    const row = await this.ctx.db
      .selectFrom('upstreams')
      .selectAll()
      .where('id', '=', upstream.id)
      .where('project_id', '=', project.id)
      .executeTakeFirst();
    if (!row) return { ok: false, reason: `${name} is not configured for project "${project.slug}"` };
    if (!row.enabled) return { ok: false, reason: `${name} is disabled` };
    // The admin principal never reaches the MCP endpoint (the admin token is not an MCP credential); it
    // asks here only for the gateway's own configuration checks, which use the project's credential.
    if (principal.kind !== 'admin' && !(await this.canCallProject(principal, project))) {
      return { ok: false, reason: `${name}: the caller may not call project "${project.slug}"` };
    }
    const auth = toAuth(row);
    if (auth.mode === 'none') return { ok: true, headers: {}, authorizationId: null };
    if (auth.mode === 'project') {
      if (!row.credential) {
        return { ok: false, reason: `${name} needs a project credential; none is configured` };
      }
      const secret = openUpstreamCredential(this.ctx, row.id, row.credential);
      return { ok: true, headers: credentialHeaders(auth.header, secret), authorizationId: null };
    }
    // per_user
    if (principal.kind !== 'user') {
      const who = principal.kind === 'api_key' ? 'API key callers' : `${principal.kind} callers`;
      return {
        ok: false,
        reason: `${name} needs each user's own authorization; ${who} have none (call with a user token)`,
      };
    }
    const auths = await this.ctx.db
      .selectFrom('upstream_authorizations')
      .selectAll()
      .where('upstream_id', '=', row.id)
      .where('user_id', '=', principal.userId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    const now = this.ctx.nowIso();
    const active = auths.find((a) => authorizationStatus(a, now) === 'active');
    if (!active) {
      const latest = auths[0];
      if (!latest) return { ok: false, reason: `${name} needs your authorization; none granted` };
      if (latest.revoked_at !== null) {
        return { ok: false, reason: `${name} needs your authorization; yours was revoked` };
      }
      return { ok: false, reason: `${name} needs your authorization; yours expired at ${latest.expires_at}` };
    }
    const secret = this.ctx.cipher
      .open(active.credential, authorizationAad(active.id, active.upstream_id, active.user_id))
      .toString('utf8');
    return { ok: true, headers: credentialHeaders(auth.header, secret), authorizationId: active.id };
  }

  async authorizationValid(authorizationId: string): Promise<boolean> {
    const row = await this.ctx.db
      .selectFrom('upstream_authorizations')
      .select(['revoked_at', 'expires_at'])
      .where('id', '=', authorizationId)
      .executeTakeFirst();
    return row !== undefined && authorizationStatus(row, this.ctx.nowIso()) === 'active';
  }

  async audit(event: AuditEvent): Promise<void> {
    await writeAudit(this.ctx, this.ctx.db, [event]);
  }

  // ------------------------------------------------------------------ Teams

  createTeam(actor: Principal, input: { slug: string; name: string }): Promise<TeamView> {
    return teams.createTeam(this.ctx, actor, input);
  }

  updateTeam(actor: Principal, ref: string, input: { name?: string }): Promise<Updated<TeamView>> {
    return teams.updateTeam(this.ctx, actor, ref, input);
  }

  listTeams(actor: Principal): Promise<TeamView[]> {
    return teams.listTeams(this.ctx, actor);
  }

  getTeam(actor: Principal, ref: string): Promise<TeamView & { members: MemberView[] }> {
    return teams.getTeam(this.ctx, actor, ref);
  }

  addTeamMember(actor: Principal, teamRef: string, userRef: string): Promise<Updated<MemberView>> {
    return memberships.addMember(this.ctx, actor, { team: teamRef }, userRef);
  }

  removeTeamMember(actor: Principal, teamRef: string, userRef: string): Promise<void> {
    return memberships.removeMember(this.ctx, actor, { team: teamRef }, userRef);
  }

  // ------------------------------------------------------------------ Users and tokens

  createUser(actor: Principal, input: { handle: string; name: string }): Promise<UserView> {
    return users.createUser(this.ctx, actor, input);
  }

  updateUser(actor: Principal, ref: string, input: { name?: string }): Promise<Updated<UserView>> {
    return users.updateUser(this.ctx, actor, ref, input);
  }

  listUsers(actor: Principal): Promise<UserView[]> {
    return users.listUsers(this.ctx, actor);
  }

  getUser(
    actor: Principal,
    ref: string,
  ): Promise<
    UserView & { teams: TeamView[]; projects: { id: string; slug: string; role: 'team' | 'direct' }[] }
  > {
    return users.getUser(this.ctx, actor, ref);
  }

  issueUserToken(
    actor: Principal,
    userRef: string,
    input: { name: string; expiresAt?: string },
  ): Promise<{ token: string; record: TokenView }> {
    return userTokens.issueUserToken(this.ctx, actor, userRef, input);
  }

  ensureUserToken(
    actor: Principal,
    userRef: string,
    input: { name: string; token: string },
  ): Promise<Updated<TokenView>> {
    return userTokens.ensureUserToken(this.ctx, actor, userRef, input);
  }

  listUserTokens(actor: Principal, userRef: string): Promise<TokenView[]> {
    return userTokens.listUserTokens(this.ctx, actor, userRef);
  }

  revokeToken(actor: Principal, tokenId: string): Promise<TokenView> {
    return userTokens.revokeToken(this.ctx, actor, tokenId);
  }

  // ------------------------------------------------------------------ Projects

  createProject(actor: Principal, input: NewProject): Promise<ProjectView> {
    return projects.createProject(this.ctx, actor, input);
  }

  listProjects(actor: Principal): Promise<ProjectView[]> {
    return projects.listProjects(this.ctx, actor);
  }

  getProject(actor: Principal, ref: string): Promise<ProjectView> {
    return projects.getProject(this.ctx, actor, ref);
  }

  updateProject(actor: Principal, ref: string, patch: ProjectPatch): Promise<Updated<ProjectView>> {
    return projects.updateProject(this.ctx, actor, ref, patch);
  }

  markProjectDeleting(actor: Principal, ref: string): Promise<ProjectRecord> {
    return deletion.markProjectDeleting(this.ctx, actor, ref);
  }

  projectsBeingDeleted(): Promise<string[]> {
    return deletion.projectsBeingDeleted(this.ctx);
  }

  deleteProject(actor: Principal, ref: string): Promise<ProjectRecord> {
    return deletion.deleteProject(this.ctx, actor, ref);
  }

  // ------------------------------------------------------------------ Direct project members

  listProjectMembers(actor: Principal, projectRef: string): Promise<MemberView[]> {
    return memberships.listProjectMembers(this.ctx, actor, projectRef);
  }

  addProjectMember(actor: Principal, projectRef: string, userRef: string): Promise<Updated<MemberView>> {
    return memberships.addMember(this.ctx, actor, { project: projectRef }, userRef);
  }

  removeProjectMember(actor: Principal, projectRef: string, userRef: string): Promise<void> {
    return memberships.removeMember(this.ctx, actor, { project: projectRef }, userRef);
  }

  // ------------------------------------------------------------------ API keys

  createApiKey(
    actor: Principal,
    projectRef: string,
    input: { name: string },
  ): Promise<{ key: string; record: ApiKeyView }> {
    return apiKeys.createApiKey(this.ctx, actor, projectRef, input);
  }

  ensureApiKey(
    actor: Principal,
    projectRef: string,
    input: { name: string; key: string },
  ): Promise<Updated<ApiKeyView>> {
    return apiKeys.ensureApiKey(this.ctx, actor, projectRef, input);
  }

  listApiKeys(actor: Principal, projectRef: string): Promise<ApiKeyView[]> {
    return apiKeys.listApiKeys(this.ctx, actor, projectRef);
  }

  revokeApiKey(actor: Principal, projectRef: string, keyId: string): Promise<ApiKeyView> {
    return apiKeys.revokeApiKey(this.ctx, actor, projectRef, keyId);
  }

  // ------------------------------------------------------------------ Upstreams

  addUpstream(actor: Principal, projectRef: string, input: NewUpstream): Promise<UpstreamView> {
    return upstreams.addUpstream(this.ctx, actor, projectRef, input);
  }

  listUpstreams(actor: Principal, projectRef: string): Promise<UpstreamView[]> {
    return upstreams.listUpstreams(this.ctx, actor, projectRef);
  }

  updateUpstream(
    actor: Principal,
    projectRef: string,
    alias: string,
    patch: UpstreamPatch,
  ): Promise<Updated<UpstreamView>> {
    return upstreams.updateUpstream(this.ctx, actor, projectRef, alias, patch);
  }

  removeUpstream(actor: Principal, projectRef: string, alias: string): Promise<void> {
    return upstreams.removeUpstream(this.ctx, actor, projectRef, alias);
  }

  // ------------------------------------------------------------------ Per-user upstream authorizations

  /**
   * Records the token a user granted for a `per_user` upstream (as an OAuth flow would leave it). While
   * the user has an active authorization, a new grant refreshes it in place (same id, so tasks bound to
   * it keep working); after revocation or expiry a grant creates a new authorization. Users grant for
   * themselves (they must be able to call the project); the admin may grant on behalf of `user`.
   */
  async grantUpstreamAuthorization(
    actor: Principal,
    projectRef: string,
    alias: string,
    input: { credential: string; expiresAt?: string; user?: string },
  ): Promise<AuthorizationView> {
    const g = parse(
      z.strictObject({
        credential: CredentialSchema,
        expiresAt: FutureTimestampSchema.optional(),
        user: z.string().min(1).optional(),
      }),
      input,
    );
    const { project, row, user } = await this.authorizationTarget(actor, projectRef, alias, g.user, 'grant');
    if (row.auth_mode !== 'per_user') {
      throw new ControlPlaneError('invalid', `Upstream "${row.alias}" does not use per-user authorization`);
    }
    const expiresAt = g.expiresAt === undefined ? null : this.ctx.futureIso(g.expiresAt);
    const now = this.ctx.nowIso();
    return this.ctx.transaction(async (trx) => {
      const rows = await trx
        .selectFrom('upstream_authorizations')
        .selectAll()
        .where('upstream_id', '=', row.id)
        .where('user_id', '=', user.id)
        .execute();
      const active = rows.find((a) => authorizationStatus(a, now) === 'active');
      const id = active?.id ?? newId('uauth');
      const sealed = this.ctx.cipher.seal(
        Buffer.from(g.credential, 'utf8'),
        authorizationAad(id, row.id, user.id),
      );
      if (active) {
        await trx
          .updateTable('upstream_authorizations')
          .set({ credential: sealed, expires_at: expiresAt, updated_at: now })
          .where('id', '=', id)
          .execute();
      } else {
        await trx
          .insertInto('upstream_authorizations')
          .values({
            id,
            upstream_id: row.id,
            user_id: user.id,
            credential: sealed,
            created_at: now,
            updated_at: now,
            expires_at: expiresAt,
            revoked_at: null,
          })
          .execute();
      }
      await auditBy(
        this.ctx,
        trx,
        actor,
        project.id,
        active ? 'authorization.refreshed' : 'authorization.granted',
        {
          authorizationId: id,
          upstreamId: row.id,
          alias: row.alias,
          userId: user.id,
          expiresAt,
        },
      );
      return toAuthorizationView(
        {
          id,
          upstream_id: row.id,
          user_id: user.id,
          created_at: active?.created_at ?? now,
          updated_at: now,
          expires_at: expiresAt,
          revoked_at: null,
        },
        row,
        now,
      );
    });
  }

  /** Revokes a user's active authorization: their own, or (admin, project managers) `user`'s. */
  async revokeUpstreamAuthorization(
    actor: Principal,
    projectRef: string,
    alias: string,
    input: { user?: string } = {},
  ): Promise<AuthorizationView> {
    const { user: userRef } = parse(z.strictObject({ user: z.string().min(1).optional() }), input);
    const { project, row, user } = await this.authorizationTarget(
      actor,
      projectRef,
      alias,
      userRef,
      'revoke',
    );
    const now = this.ctx.nowIso();
    return this.ctx.transaction(async (trx) => {
      const rows = await trx
        .selectFrom('upstream_authorizations')
        .selectAll()
        .where('upstream_id', '=', row.id)
        .where('user_id', '=', user.id)
        .execute();
      const active = rows.find((a) => authorizationStatus(a, now) === 'active');
      if (!active) {
        throw new ControlPlaneError(
          'not_found',
          `User "${user.handle}" has no active authorization for upstream "${row.alias}"`,
        );
      }
      await trx
        .updateTable('upstream_authorizations')
        .set({ revoked_at: now })
        .where('id', '=', active.id)
        .execute();
      await auditBy(this.ctx, trx, actor, project.id, 'authorization.revoked', {
        authorizationId: active.id,
        upstreamId: row.id,
        alias: row.alias,
        userId: user.id,
      });
      return toAuthorizationView({ ...active, revoked_at: now }, row, now);
    });
  }

  /** Managers see every user's authorizations for the project; other users see their own. */
  async listUpstreamAuthorizations(actor: Principal, projectRef: string): Promise<AuthorizationView[]> {
    const project = await requireProjectRow(this.ctx.db, projectRef);
    const record = await toProjectRecord(this.ctx.db, project);
    const manages = await this.canManageProject(actor, record);
    if (!manages && !(actor.kind === 'user' && (await this.canCallProject(actor, record)))) {
      throw await forbidden(this.ctx, actor, project.id, 'authorization.list');
    }
    let q = this.ctx.db
      .selectFrom('upstream_authorizations')
      .innerJoin('upstreams', 'upstreams.id', 'upstream_authorizations.upstream_id')
      .selectAll('upstream_authorizations')
      .select(['upstreams.alias', 'upstreams.project_id'])
      .where('upstreams.project_id', '=', project.id)
      .orderBy('upstream_authorizations.created_at')
      .orderBy('upstream_authorizations.id');
    if (!manages && actor.kind === 'user') q = q.where('upstream_authorizations.user_id', '=', actor.userId);
    const now = this.ctx.nowIso();
    return (await q.execute()).map((r) => toAuthorizationView(r, r, now));
  }

  // ------------------------------------------------------------------ Audit

  /**
   * Audit records, newest first. With a project: its managers (and the admin) may read them; without,
   * only the admin, who then sees every record.
   */
  async listAudit(
    actor: Principal,
    opts: { project?: string; limit?: number; before?: string } = {},
  ): Promise<AuditRecord[]> {
    const limit = Math.min(Math.max(opts.limit ?? 100, 1), 1000);
    let q = this.ctx.db.selectFrom('audit_events').selectAll().orderBy('id', 'desc').limit(limit);
    if (opts.project !== undefined) {
      const projectId = await this.auditProjectId(actor, opts.project);
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

  // ------------------------------------------------------------------ Internals

  private async auditProjectId(actor: Principal, ref: string): Promise<string> {
    const row = await this.ctx.db
      .selectFrom('projects')
      .select(['id', 'team_id'])
      .where((eb) => eb.or([eb('id', '=', ref), eb('slug', '=', ref)]))
      .executeTakeFirst();
    if (row) {
      if (actor.kind === 'admin') return row.id;
      if (actor.kind === 'user' && (await isTeamMember(this.ctx.db, actor.userId, row.team_id)))
        return row.id;
      throw await forbidden(this.ctx, actor, row.id, 'audit.list');
    }
    // A deleted project's trail stays readable by the admin, by project id.
    if (actor.kind === 'admin') return ref;
    throw new ControlPlaneError('not_found', `No project "${ref}"`);
  }

  private async authorizationTarget(
    actor: Principal,
    projectRef: string,
    alias: string,
    userRef: string | undefined,
    op: 'grant' | 'revoke',
  ) {
    const project = await requireProjectRow(this.ctx.db, projectRef);
    const record = await toProjectRecord(this.ctx.db, project);
    let user;
    if (userRef === undefined) {
      if (actor.kind !== 'user')
        throw new ControlPlaneError('invalid', 'Name the user the authorization is for');
      user = await requireUserRow(this.ctx.db, actor.userId);
    } else {
      user = await requireUserRow(this.ctx.db, userRef);
    }
    const self = actor.kind === 'user' && actor.userId === user.id;
    if (!self) {
      // On behalf of someone else: the admin may grant and revoke; project managers may only revoke.
      const allowed =
        actor.kind === 'admin' || (op === 'revoke' && (await this.canManageProject(actor, record)));
      if (!allowed) throw await forbidden(this.ctx, actor, project.id, `authorization.${op}`);
    }
    if (op === 'grant' && !(await isTeamMemberOrDirect(this.ctx.db, user.id, record))) {
      throw new ControlPlaneError(
        'forbidden',
        `User "${user.handle}" may not call project "${project.slug}"`,
      );
    }
    const row = await requireUpstreamRow(this.ctx, project, alias);
    return { project, row, user };
  }
}

// ---------------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------------

function authorizationAad(id: string, upstreamId: string, userId: string): string {
  return `upstream-authorization:${id}:${upstreamId}:${userId}`;
}

function credentialHeaders(header: string | undefined, secret: string): Record<string, string> {
  return header === undefined ? { Authorization: `Bearer ${secret}` } : { [header]: secret };
}

function authorizationStatus(
  a: { revoked_at: string | null; expires_at: string | null },
  nowIso: string,
): AuthorizationView['status'] {
  if (a.revoked_at !== null) return 'revoked';
  if (a.expires_at !== null && a.expires_at <= nowIso) return 'expired';
  return 'active';
}

function toAuthorizationView(
  a: {
    id: string;
    upstream_id: string;
    user_id: string;
    created_at: string;
    updated_at: string;
    expires_at: string | null;
    revoked_at: string | null;
  },
  upstream: { alias: string; project_id: string },
  nowIso: string,
): AuthorizationView {
  return {
    id: a.id,
    upstreamId: a.upstream_id,
    upstreamAlias: upstream.alias,
    projectId: upstream.project_id,
    userId: a.user_id,
    status: authorizationStatus(a, nowIso),
    createdAt: a.created_at,
    updatedAt: a.updated_at,
    expiresAt: a.expires_at,
    revokedAt: a.revoked_at,
  };
}
