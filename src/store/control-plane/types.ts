/**
 * The control plane's vocabulary: who may call what, with which upstream credential. The API and the
 * gateway depend on these types and on the `ControlPlane` interface; `ControlPlaneStore` (this folder)
 * implements it over the database (SQLite or PostgreSQL).
 */
import type { VersionedApprovalPolicy } from '../../config/approvals';
import type { HostingPolicy } from '../../config/hosting';
import type { CacheConfig, LimitsConfig } from '../../config/config';
import type { UpstreamProbe } from '../../protocol';

/** Who a request acts as. The instance administrator exists only on the admin API. */
export type Principal =
  /**
   * `via` only labels audit records (`admin:cli`, `admin:bootstrap`, `admin:oidc` for what sign-in
   * through an OpenID issuer provisions); it grants nothing.
   */
  | { kind: 'admin'; via?: 'api' | 'cli' | 'bootstrap' | 'oidc' }
  | { kind: 'user'; userId: string }
  | { kind: 'api_key'; keyId: string; projectId: string }
  | { kind: 'anonymous' };

/**
 * Tool profiles say what kind of calls a project's tools may make. `tasks` lets task-aware calls take
 * the durable task path; `standard` keeps every call synchronous.
 */
export type ToolProfile = 'tasks' | 'standard';

export type UpstreamAuth =
  /** No credential. */
  | { mode: 'none' }
  /** One project credential (sent as `Authorization: Bearer …` unless `header` names another header). */
  | { mode: 'project'; header?: string }
  /**
   * Each user's own authorization for this upstream (as an OAuth flow would leave it). With `oauth`,
   * users connect it with OAuth from the dashboard, through a client registered dynamically or the
   * configured `clientId` (its secret is never in a record: `clientSecretSet` says whether there is one).
   */
  | {
      mode: 'per_user';
      header?: string;
      /**
       * `registration`: how the gateway's client at the upstream's authorization server came about at
       * the last connect (`configured` clientId, its `metadata_document` URL, `dynamic` registration).
       */
      oauth?: { clientId?: string; clientSecretSet: boolean; registration?: OAuthRegistration };
      /** Each caller's credential by RFC 8693 token exchange of their OAuth access token. */
      tokenExchange?: TokenExchangeSettings;
    };

/** How the caller is known to the credential look-up (token-exchange.ts). */
export interface CredentialSubject {
  /** The caller's OAuth access token (they signed in with OAuth): it can be exchanged. */
  accessToken?: string;
  /** A running task's later call (the worker): only a kept token can be used. */
  task?: boolean;
}

/** How the gateway's OAuth client at an upstream's authorization server came about (docs/oauth.md). */
export type OAuthRegistration = 'configured' | 'metadata_document' | 'dynamic';

/** An upstream's token exchange settings as records and views show them (never the secret). */
export interface TokenExchangeSettings {
  issuer: string;
  clientId: string;
  clientSecretSet: boolean;
  audience?: string;
  scope?: string;
}

export interface UpstreamRecord {
  id: string;
  alias: string;
  url: string;
  enabled: boolean;
  auth: UpstreamAuth;
  /**
   * An operator (configuration, bootstrap file, instance admin) set its current address: connections to
   * it skip the address policy. False when a project manager did (docs/admin.md, "Upstream addresses").
   */
  addressApproved: boolean;
  /** What the last probe found out (era, version, time, error); absent until the first probe. */
  probe?: UpstreamProbe;
  /** Which ordinary tools the gateway hosts as its own tasks (src/config/hosting.ts); absent: none. */
  hosting?: HostingPolicy;
}

/** A project as the gateway serves it. */
export interface ProjectRecord {
  id: string;
  slug: string;
  teamId: string;
  /** `required` (default): bearer token needed; `anonymous`: anyone may call (tasks bound by id alone). */
  authMode: 'required' | 'anonymous';
  toolProfile: ToolProfile;
  features: { tasks: boolean };
  namespacing: boolean;
  cache: CacheConfig;
  limits: LimitsConfig;
  upstreams: UpstreamRecord[];
  /** The approval policy and its version (docs/approvals.md); absent: no call waits for approval. */
  approvals?: VersionedApprovalPolicy;
}

/** The credential a call uses toward one upstream, and which authorization it came from. */
export type UpstreamCredential =
  | {
      ok: true;
      headers: Record<string, string>;
      authorizationId: string | null;
      /**
       * The upstream URL the credential was read with (absent when there is none to send). A credential is
       * bound to where it was given: one read for another address than the caller's record is not used.
       */
      boundTo?: string;
    }
  /**
   * `connectUrl`: where the user connects the upstream with OAuth, when that would give them one.
   * `tokenExchange`: the upstream exchanges callers' OAuth access tokens and this caller has none.
   */
  | { ok: false; reason: string; connectUrl?: string; tokenExchange?: 'oauth_sign_in_required' };

export interface AuditEvent {
  projectId: string | null;
  actor: string;
  action: string;
  /** Non-sensitive details (ids, names); never tokens, credentials or payloads. */
  detail?: Record<string, unknown>;
}

export interface ControlPlane {
  /** A bearer token (user personal access token or project API key); undefined if unknown or revoked. */
  authenticate(token: string): Promise<Principal | undefined>;
  projectBySlug(slug: string): Promise<ProjectRecord | undefined>;
  projectById(id: string): Promise<ProjectRecord | undefined>;
  /** The same, cached until the next control-plane change (as `projectBySlug`): for per-request reads. */
  servedProjectById(id: string): Promise<ProjectRecord | undefined>;
  /** Team members and direct members (users), or the project's own unrevoked API keys. */
  canCallProject(principal: Principal, project: ProjectRecord): Promise<boolean>;
  /** Team members of the owning team (and the admin): team-level mutations such as changing the project. */
  canManageProject(principal: Principal, project: ProjectRecord): Promise<boolean>;
  /**
   * The credential `principal` is entitled to for `upstream`, never another one. `subject`: the caller's
   * OAuth access token, for upstreams that exchange it (RFC 8693), or that a running task asks.
   */
  upstreamCredential(
    principal: Principal,
    project: ProjectRecord,
    upstream: UpstreamRecord,
    subject?: CredentialSubject,
  ): Promise<UpstreamCredential>;
  /** Whether the upstream authorization a task started with is still valid (not revoked, not expired). */
  authorizationValid(authorizationId: string): Promise<boolean>;
  audit(event: AuditEvent): Promise<void>;
}

/** Stable string form of a principal, as recorded on tasks (`kind:id`). */
export function principalId(p: Principal): { kind: string; id: string } {
  switch (p.kind) {
    case 'admin':
      return { kind: 'admin', id: 'admin' };
    case 'user':
      return { kind: 'user', id: p.userId };
    case 'api_key':
      return { kind: 'api_key', id: p.keyId };
    case 'anonymous':
      return { kind: 'anonymous', id: 'anonymous' };
  }
}
