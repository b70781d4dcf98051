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
import * as identities from './identities';
import * as memberships from './memberships';
import * as projects from './projects';
import * as renewal from './renewal';
import * as serving from './serving';
import * as teams from './teams';
import type { AuditEvent, ControlPlane, Principal, ProjectRecord } from './types';
import * as upstreams from './upstreams';
import * as userTokens from './user-tokens';
import * as users from './users';
import type { AuditRecord, MemberView, TeamView, Updated, UserView } from './views';

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

/**
 * A module's functions over the store context, as the facade's methods: the context bound, the rest of
 * the signature (and the documentation) the module's own. Most of the facade is this; what it does
 * itself (a renamed or combined call, the serving cache) is written out in the class below.
 */
type Delegated<M, K extends keyof M> = {
  [P in K]: M[P] extends (ctx: StoreContext, ...args: infer A) => infer R ? (...args: A) => R : never;
};

/** A module's functions named in `names`, handed on unchanged: bound to a context, they are facade methods. */
function handOn<M, const K extends keyof M>(mod: M, names: readonly K[]) {
  return (ctx: StoreContext): Delegated<M, K> =>
    Object.fromEntries(
      names.map((name) => {
        const fn = mod[name] as (ctx: StoreContext, ...args: unknown[]) => unknown;
        return [name, (...args: unknown[]) => fn(ctx, ...args)];
      }),
    ) as Delegated<M, K>;
}

/** The functions of each aggregate's module the facade hands on unchanged, by module. */
const HANDED_ON = [
  handOn(serving, ['authenticate', 'upstreamCredential', 'authorizationValid']),
  handOn(access, ['projectRole', 'canManageProject']),
  handOn(identities, ['externalUser', 'identityId', 'linkIdentity', 'listIdentities', 'unlinkIdentity']),
  handOn(renewal, ['attachRenewal']),
  handOn(teams, ['createTeam', 'updateTeam', 'listTeams', 'getTeam']),
  handOn(users, ['createUser', 'updateUser', 'listUsers']),
  handOn(userTokens, ['issueUserToken', 'ensureUserToken', 'listUserTokens', 'revokeToken']),
  handOn(projects, ['createProject', 'listProjects', 'getProject', 'updateProject']),
  handOn(deletion, ['markProjectDeleting', 'projectsBeingDeleted', 'deleteProject']),
  handOn(memberships, ['listProjectMembers']),
  handOn(apiKeys, ['createApiKey', 'ensureApiKey', 'listApiKeys', 'revokeApiKey']),
  handOn(upstreams, [
    'addUpstream',
    'listUpstreams',
    'updateUpstream',
    'removeUpstream',
    'recordOAuthRegistration',
    'recordUpstreamProbe',
  ]),
  handOn(authorizations, [
    'grantUpstreamAuthorization',
    'revokeUpstreamAuthorization',
    'listUpstreamAuthorizations',
  ]),
] as const;

/** Every method HANDED_ON gives the facade, as one type. */
type HandedOn = UnionToIntersection<ReturnType<(typeof HANDED_ON)[number]>>;
type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void
  ? I
  : never;

// The class gets these methods from HANDED_ON in its constructor; the interface, merged with it, declares
// them (so it has no members of its own).
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface ControlPlaneStore extends HandedOn {}

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class ControlPlaneStore implements ControlPlane {
  private readonly ctx: StoreContext;

  constructor(db: Kysely<Database>, cipher: Cipher, options: ControlPlaneStoreOptions = {}) {
    this.ctx = new StoreContext(db, cipher, options);
    for (const bind of HANDED_ON) Object.assign(this, bind(this.ctx));
  }

  // ------------------------------------------ ControlPlane (serving.ts, access.ts)

  userToken = (token: string) => userTokens.userToken(this.ctx, token);
  projectBySlug = (slug: string) => serving.projectBySlug(this.ctx, slug);
  projectById = (id: string) => serving.projectById(this.ctx, id);
  servedProjectById = (id: string) => serving.servedProjectById(this.ctx, id);

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

  /** The gateway's own events (refusals): recorded outside a transaction, changing nothing. */
  audit(event: AuditEvent): Promise<void> {
    return writeAudit(this.ctx, this.ctx.db, [event]);
  }

  // ------------------------------------------ Teams (teams.ts, memberships.ts)

  addTeamMember(actor: Principal, teamRef: string, userRef: string): Promise<Updated<MemberView>> {
    return memberships.addMember(this.ctx, actor, { team: teamRef }, userRef);
  }

  removeTeamMember(actor: Principal, teamRef: string, userRef: string): Promise<void> {
    return memberships.removeMember(this.ctx, actor, { team: teamRef }, userRef);
  }

  // ------------------------------------------ Users and tokens (users.ts, user-tokens.ts)

  getUser(
    actor: Principal,
    ref: string,
  ): Promise<
    UserView & { teams: TeamView[]; projects: { id: string; slug: string; role: 'team' | 'direct' }[] }
  > {
    return users.getUser(this.ctx, actor, ref);
  }

  // ------------------------------------------ Projects (projects.ts, deletion.ts)

  /** Approval policies and who may approve (approval-policies.ts). */
  get approvalPolicies(): ApprovalPolicies {
    return new ApprovalPolicies(this.ctx);
  }

  // ------------------------------------------ Direct project members (memberships.ts)

  addProjectMember(actor: Principal, projectRef: string, userRef: string): Promise<Updated<MemberView>> {
    return memberships.addMember(this.ctx, actor, { project: projectRef }, userRef);
  }

  removeProjectMember(actor: Principal, projectRef: string, userRef: string): Promise<void> {
    return memberships.removeMember(this.ctx, actor, { project: projectRef }, userRef);
  }

  // ------------------------------------------ Upstreams (upstreams.ts)

  /** The client an upstream names at its authorization server, and how the last connect got one. */
  upstreamOAuthClient = (upstreamId: string) => upstreams.upstreamOAuthClient(this.ctx, upstreamId);

  // ------------------------------------------ Audit (audit-log.ts)

  listAudit(
    actor: Principal,
    opts: { project?: string; limit?: number; before?: string } = {},
  ): Promise<AuditRecord[]> {
    return listAudit(this.ctx, actor, opts);
  }
}
