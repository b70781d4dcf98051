/**
 * The control plane over the store database (SQLite or PostgreSQL, portable Kysely only): teams, users
 * and their personal access tokens, projects with their settings, memberships, API keys, upstreams and
 * their credentials, per-user upstream authorizations, and the audit trail.
 *
 * `ControlPlaneStore` is the one object the rest of the gateway holds. It keeps no rules of its own: it
 * builds the shared context (context.ts) and hands each call to the module that owns the aggregate,
 * where the queries and invariants live. Every administrative operation takes the acting principal and
 * enforces the roles table (access.ts) itself, so the admin API, the CLI and the bootstrap file share
 * one set of rules; every mutation writes an audit record in the same transaction (audit.ts).
 *
 * Secrets: tokens and keys are stored as SHA-256 only; upstream credentials and user authorizations are
 * sealed with the store cipher, the associated data binding each ciphertext to its row.
 */
import type { Kysely } from 'kysely';
import type { UpstreamProbe } from '../../protocol';
import type { Cipher } from '../cipher';
import type { Database } from '../schema';
import * as access from './access';
import { ApprovalPolicies } from './approval-policies';
import * as apiKeys from './api-keys';
import { writeAudit } from './audit';
import { listAudit } from './audit-log';
import * as authorizations from './authorizations';
import type { ControlPlaneStoreOptions } from './context';
import { StoreContext } from './context';
import * as deletion from './deletion';
import type { ExternalIdentity, IdentityPolicy, IdentityView } from './identities';
import * as identities from './identities';
import * as memberships from './memberships';
import * as projects from './projects';
import * as renewal from './renewal';
import type { NewProject, NewUpstream, ProjectPatch, UpstreamPatch } from './schemas';
import * as serving from './serving';
import * as teams from './teams';
import type { CredentialSubject } from './token-exchange';
import type {
  AuditEvent,
  ControlPlane,
  OAuthRegistration,
  Principal,
  ProjectRecord,
  UpstreamCredential,
  UpstreamRecord,
} from './types';
import * as upstreams from './upstreams';
import * as userTokens from './user-tokens';
import * as users from './users';
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

export { actorId } from './audit';
export type { ControlPlaneStoreOptions, ExchangeToken, RevokeAtServer } from './context';
export { connectsWithOAuth } from './upstreams';
export type { RenewAuthorization, RenewedTokens } from './renewal';
export { newId } from './context';
export type { ControlPlaneErrorCode } from './errors';
export type { ExternalIdentity, IdentityPolicy, IdentityView } from './identities';
export { ControlPlaneError } from './errors';
export type { NewProject, NewUpstream, ProjectPatch, UpstreamAuthInput, UpstreamPatch } from './schemas';
export {
  AliasSchema,
  AuthModeSchema,
  CredentialSchema,
  HandleSchema,
  HeaderNameSchema,
  NameSchema,
  NewProjectSchema,
  NewUpstreamSchema,
  parse,
  ProjectPatchSchema,
  SlugSchema,
  ToolProfileSchema,
  UpstreamAuthInputSchema,
  UpstreamPatchSchema,
} from './schemas';
export type {
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

export class ControlPlaneStore implements ControlPlane {
  private readonly ctx: StoreContext;

  constructor(db: Kysely<Database>, cipher: Cipher, options: ControlPlaneStoreOptions = {}) {
    this.ctx = new StoreContext(db, cipher, options);
  }

  // ------------------------------------------ ControlPlane (serving.ts, access.ts)

  authenticate(token: string): Promise<Principal | undefined> {
    return serving.authenticate(this.ctx, token);
  }

  userToken = (token: string) => userTokens.userToken(this.ctx, token);
  projectBySlug = (slug: string) => serving.projectBySlug(this.ctx, slug);
  projectById = (id: string) => serving.projectById(this.ctx, id);

  canCallProject(principal: Principal, project: ProjectRecord): Promise<boolean> {
    return serving.mayCall(this.ctx, principal, project);
  }

  /**
   * Drops what this process cached for MCP requests, at once rather than at the next change check: a
   * listen stream is about to be told of a change another replica made, and its client may re-list now.
   */
  forgetServed(): void {
    this.ctx.serving.clear();
  }

  projectRole(userId: string, project: ProjectRecord): Promise<'team' | 'member' | undefined> {
    return access.projectRole(this.ctx, userId, project);
  }

  canManageProject(principal: Principal, project: ProjectRecord): Promise<boolean> {
    return access.canManageProject(this.ctx, principal, project);
  }

  upstreamCredential(
    principal: Principal,
    project: ProjectRecord,
    upstream: UpstreamRecord,
    subject?: CredentialSubject,
  ): Promise<UpstreamCredential> {
    return serving.upstreamCredential(this.ctx, principal, project, upstream, subject);
  }

  authorizationValid(authorizationId: string): Promise<boolean> {
    return serving.authorizationValid(this.ctx, authorizationId);
  }

  /** The gateway's own events (refusals): recorded outside a transaction, changing nothing. */
  audit(event: AuditEvent): Promise<void> {
    return writeAudit(this.ctx, this.ctx.db, [event]);
  }

  // ------------------------------------------ External identities (identities.ts)

  /** The user an external subject is (found, linked or provisioned per `policy`); undefined if none. */
  externalUser(identity: ExternalIdentity, policy: IdentityPolicy): Promise<string | undefined> {
    return identities.externalUser(this.ctx, identity, policy);
  }

  /** Records what an authorization made by connecting with OAuth needs to renew itself (renewal.ts). */
  attachRenewal(authorizationId: string, r: { refreshToken: string; clientId: string; resource: string }) {
    return renewal.attachRenewal(this.ctx, authorizationId, r);
  }

  identityId(issuer: string, subject: string): Promise<string | undefined> {
    return identities.identityId(this.ctx, issuer, subject);
  }

  linkIdentity(actor: Principal, userRef: string, input: { issuer: string; subject: string }) {
    return identities.linkIdentity(this.ctx, actor, userRef, input);
  }

  listIdentities(actor: Principal, userRef: string): Promise<IdentityView[]> {
    return identities.listIdentities(this.ctx, actor, userRef);
  }

  unlinkIdentity(actor: Principal, id: string): Promise<void> {
    return identities.unlinkIdentity(this.ctx, actor, id);
  }

  // ------------------------------------------ Teams (teams.ts, memberships.ts)

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

  // ------------------------------------------ Users and tokens (users.ts, user-tokens.ts)

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

  // ------------------------------------------ Projects (projects.ts, deletion.ts)

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

  /** Approval policies and who may approve (approval-policies.ts). */
  get approvalPolicies(): ApprovalPolicies {
    return new ApprovalPolicies(this.ctx);
  }

  // ------------------------------------------ Direct project members (memberships.ts)

  listProjectMembers(actor: Principal, projectRef: string): Promise<MemberView[]> {
    return memberships.listProjectMembers(this.ctx, actor, projectRef);
  }

  addProjectMember(actor: Principal, projectRef: string, userRef: string): Promise<Updated<MemberView>> {
    return memberships.addMember(this.ctx, actor, { project: projectRef }, userRef);
  }

  removeProjectMember(actor: Principal, projectRef: string, userRef: string): Promise<void> {
    return memberships.removeMember(this.ctx, actor, { project: projectRef }, userRef);
  }

  // ------------------------------------------ API keys (api-keys.ts)

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

  // ------------------------------------------ Upstreams (upstreams.ts)

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

  /** The client an upstream names at its authorization server, and how the last connect got one. */
  upstreamOAuthClient = (upstreamId: string) => upstreams.upstreamOAuthClient(this.ctx, upstreamId);
  recordOAuthRegistration(upstreamId: string, registration: OAuthRegistration): Promise<void> {
    return upstreams.recordOAuthRegistration(this.ctx, upstreamId, registration);
  }

  /** Records what probing an upstream found out (src/upstream/eras.ts); shown in upstream views. */
  recordUpstreamProbe(upstreamId: string, probe: UpstreamProbe): Promise<void> {
    return upstreams.recordUpstreamProbe(this.ctx, upstreamId, probe);
  }

  // ------------------------------------------ Per-user authorizations (authorizations.ts)

  grantUpstreamAuthorization(
    actor: Principal,
    projectRef: string,
    alias: string,
    input: { credential: string; expiresAt?: string; user?: string },
    /** `forAddress`: only while the upstream still has this address (a token got for it by connecting). */
    opts: { forAddress?: string } = {},
  ): Promise<AuthorizationView> {
    return authorizations.grantUpstreamAuthorization(this.ctx, actor, projectRef, alias, input, opts);
  }

  revokeUpstreamAuthorization(
    actor: Principal,
    projectRef: string,
    alias: string,
    input: { user?: string } = {},
  ): Promise<AuthorizationView> {
    return authorizations.revokeUpstreamAuthorization(this.ctx, actor, projectRef, alias, input);
  }

  listUpstreamAuthorizations(actor: Principal, projectRef: string): Promise<AuthorizationView[]> {
    return authorizations.listUpstreamAuthorizations(this.ctx, actor, projectRef);
  }

  // ------------------------------------------ Audit (audit-log.ts)

  listAudit(
    actor: Principal,
    opts: { project?: string; limit?: number; before?: string } = {},
  ): Promise<AuditRecord[]> {
    return listAudit(this.ctx, actor, opts);
  }
}
