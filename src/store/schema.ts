/** Table types for Kysely. Timestamps are ISO-8601 strings so SQLite and PostgreSQL agree. */
import type { Generated } from 'kysely';

export interface TasksTable {
  /** SHA-256 of the gateway task id: the id itself is a credential and is never stored. */
  task_key: string;
  workflow_id: string;
  project: string;
  caller_kind: string;
  caller_id: string;
  upstream: string;
  tool: string;
  /** The upstream authorization the task started with (per-user credentials), if any. */
  authorization_id: string | null;
  status: string;
  status_message: string | null;
  created_at: string;
  last_updated_at: string;
  ttl_ms: number | null;
  poll_interval_ms: number | null;
  /** Encrypted JSON of the status detail (input requests, result or error). */
  detail: Buffer | null;
  /** When payload retention removed `detail` (migration 0004); null while the payload is kept. */
  payload_expired_at: string | null;
  /** When the gateway stored `detail`, by its own clock (migration 0011): the payload clock starts here. */
  detail_stored_at?: string | null;
  /** When the task's upstream became due for a poll that no watch is making (migration 0017). */
  watch_due_at?: string | null;
  /** The human the task is assigned to on the dashboard (migration 0006); never grants access. */
  assignee_user_id?: string | null;
  /** 1 for a task the gateway hosts (docs/hosted-tasks.md), else 0 (migration 0022). */
  hosted?: number;
  /** Hashes of the input keys the client answered, comma terminated (migration 0026, answered-inputs.ts). */
  answered_inputs?: string | null;
}

export interface TaskEventsTable {
  id: Generated<number>;
  task_key: string;
  at: string;
  kind: string;
  status: string;
  status_message: string | null;
  /** Assignment rows (migration 0006): who assigned (`user:<id>`) and to whom (null = unassigned). */
  actor?: string | null;
  assignee_user_id?: string | null;
}

/** Dashboard sign-in sessions (migration 0006). */
export interface DashboardSessionsTable {
  /** SHA-256 of the session cookie's secret. */
  id_hash: string;
  user_id: string;
  /** The personal access token used to sign in: the session ends when it is revoked or expires. */
  token_id: string;
  csrf_token: string;
  created_at: string;
  expires_at: string;
}

/*
 * Control plane (migration 0002). Booleans are integers (0/1) and settings are JSON text, so one schema
 * serves SQLite and PostgreSQL. Secrets are never stored: tokens and keys as SHA-256 hex, upstream
 * credentials sealed with the store cipher (associated data binds each to its row).
 */

export interface TeamsTable {
  id: string;
  slug: string;
  name: string;
  created_at: string;
}

export interface UsersTable {
  id: string;
  handle: string;
  name: string;
  created_at: string;
}

export interface TeamMembersTable {
  team_id: string;
  user_id: string;
  created_at: string;
}

/** Personal access tokens (`trp_…`). */
export interface UserTokensTable {
  id: string;
  user_id: string;
  name: string;
  token_hash: string;
  /** Non-secret hint for listings: prefix and first four characters. */
  hint: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
}

export interface ProjectsTable {
  id: string;
  slug: string;
  team_id: string;
  auth_mode: string;
  tool_profile: string;
  /** JSON `{ tasks: boolean }`. */
  features: string;
  namespacing: number;
  /** JSON CacheConfig. */
  cache: string;
  /** JSON LimitsConfig. */
  limits: string;
  created_at: string;
  updated_at: string;
  /** Set when the project's deletion workflow started (migration 0004): the project no longer serves. */
  deleting_at?: string | null;
  /** Migration 0023: the approval policy (JSON, null: none) and its version (docs/approvals.md). */
  approval_policy?: string | null;
  approval_version?: number;
}

export interface ProjectMembersTable {
  project_id: string;
  user_id: string;
  created_at: string;
}

/** Project API keys (`trk_…`). */
export interface ApiKeysTable {
  id: string;
  project_id: string;
  name: string;
  key_hash: string;
  hint: string;
  created_at: string;
  revoked_at: string | null;
  /** Migration 0024: who created the key (audit's actor form); null for keys from before. */
  created_by?: string | null;
}

export interface UpstreamsTable {
  id: string;
  project_id: string;
  alias: string;
  url: string;
  enabled: number;
  /** `none` | `project` | `per_user`. */
  auth_mode: string;
  /** Header that carries the credential; null means `Authorization: Bearer …`. */
  auth_header: string | null;
  /** Sealed project credential (mode `project`), associated data `upstream-credential:{id}`. */
  credential: Buffer | null;
  created_at: string;
  updated_at: string;
  /** The last probe (migration 0008): `modern` | `legacy` | null (none spoken), version, when, why not. */
  protocol_era?: string | null;
  protocol_version?: string | null;
  probed_at?: string | null;
  probe_error?: string | null;
  /**
   * Migration 0015: users connect this `per_user` upstream with OAuth (1); the client to use at its
   * authorization server instead of dynamic registration, the secret sealed
   * (`upstream-oauth-client-secret:{id}`).
   */
  oauth?: number;
  oauth_client_id?: string | null;
  oauth_client_secret?: Buffer | null;
  /**
   * Migration 0016: an operator (configuration, bootstrap file, instance admin) set the current address
   * (1), so its connections skip the address policy; 0 when a project manager did.
   */
  address_approved?: number;
  /**
   * Migration 0018: the client registration method last used at its authorization server
   * (`configured` | `metadata_document` | `dynamic`); its token exchange settings (JSON: issuer,
   * clientId, audience, scope) and their client secret, sealed (`upstream-token-exchange-secret:{id}`).
   */
  oauth_registration?: string | null;
  token_exchange?: string | null;
  token_exchange_secret?: Buffer | null;
  /**
   * Migration 0020: the hosting policy (issue 24, src/config/hosting.ts) as JSON with its defaults
   * applied; null: the gateway hosts none of its tools.
   */
  hosting?: string | null;
}

/**
 * Tokens obtained by RFC 8693 token exchange (migration 0018): one per user and upstream, sealed
 * (`upstream-token-exchange:{id}:{user_id}:{upstream_id}`), for the address in `address`.
 */
export interface UpstreamTokenExchangeTable {
  id: string;
  upstream_id: string;
  user_id: string;
  token: Buffer;
  expires_at: string | null;
  address: string;
  created_at: string;
  updated_at: string;
}

/** Sessions with stateful 2025-era upstreams (migration 0008), one per upstream, credential and variant. */
export interface UpstreamSessionsTable {
  scope: string;
  upstream_id: string | null;
  /** Names this session among the scope's successive ones (tasks are bound to it). */
  nonce: string;
  url: string;
  protocol_version: string;
  /** Sealed JSON `{ sessionId, initialize }`, associated data `upstream-session:{scope}:{nonce}`. */
  state: Buffer;
  created_at: string;
  /** Not ended at shutdown before this time: upstream tasks live in the session until their ttl. */
  pinned_until: string | null;
}

/** A user's authorization for one upstream, as an OAuth flow would leave it. */
export interface UpstreamAuthorizationsTable {
  id: string;
  upstream_id: string;
  user_id: string;
  /** Sealed token, associated data `upstream-authorization:{id}:{upstream_id}:{user_id}`. */
  credential: Buffer;
  created_at: string;
  updated_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  /** Made by connecting with OAuth (migration 0012): the sealed refresh token (`…:refresh` data). */
  refresh_token?: Buffer | null;
  /** The `upstream_oauth_clients` row the tokens were issued to, and the resource they are for. */
  oauth_client_id?: string | null;
  oauth_resource?: string | null;
  /** A replica renews the tokens until then; the others wait for its row (migration 0028). */
  renewing_until?: string | null;
}

/** An external subject (issuer + configured user claim) linked to a user (migration 0012). */
export interface ExternalIdentitiesTable {
  id: string;
  issuer: string;
  subject: string;
  user_id: string;
  created_at: string;
}

/** The gateway's client registration at an upstream's authorization server (migration 0012). */
export interface UpstreamOAuthClientsTable {
  id: string;
  issuer: string;
  redirect_uri: string;
  client_id: string;
  /** Sealed, associated data `upstream-oauth-client:{id}`; null for a public client. */
  client_secret: Buffer | null;
  created_at: string;
}

export interface AuditEventsTable {
  /** Time-ordered (sorts by creation). */
  id: string;
  at: string;
  project_id: string | null;
  actor: string;
  action: string;
  /** JSON of non-sensitive details. */
  detail: string | null;
}

export interface PayloadsTable {
  id: string;
  task_key: string;
  kind: string;
  created_at: string;
  ciphertext: Buffer;
}

export interface EndedMcpSessionsTable {
  nonce: string;
  expires_at: string;
}

export interface McpClientAnswersTable {
  id: string;
  created_at: string;
  ciphertext: Buffer;
}

export interface ControlPlaneGenerationTable {
  id: number;
  generation: number;
}

export interface FirstCallsTable {
  task_key: string;
  state: string;
  at: string;
}

/** Migration 0021: hosted calls waiting for (or holding) a slot of their upstream (store/tasks/hosted-queue.ts). */
export interface HostedQueueTable {
  task_key: string;
  upstream_id: string;
  enqueued_at: string;
  /** `asking`: the call's upstream waits for the client's answer; the slot is lent, the place kept. */
  state: 'waiting' | 'running' | 'asking';
  /** Migration 0029: the call's last look at the queue (ISO time); null before its first since then. */
  looked_at: string | null;
}

/** Migration 0025: a running task the watch hub polls (store/tasks/watch-hub.ts). */
export interface WatchHubTable {
  task_key: string;
  workflow_id: string;
  project: string;
  upstream: string;
  generation: string;
  watch: string;
  poll_interval_ms: number;
  due_at: string;
  lease_owner: string | null;
  lease_until: string | null;
}

/** Migration 0027: each watch hub's lease (store/tasks/watch-hub.ts): its rows are held while it is alive. */
export interface WatchHubOwnersTable {
  owner: string;
  alive_until: string;
}

/** Migration 0023: a call waiting (or that waited) for approval (store/tasks/approvals.ts). */
export interface ApprovalsTable {
  id: string;
  project_id: string;
  task_key: string;
  upstream: string;
  tool: string;
  caller_kind: string;
  caller_id: string;
  args_sha256: string;
  policy_version: number;
  policy: string;
  status: string;
  created_at: string;
  expires_at: string;
  decided_at: string | null;
  decisions: string;
  request_ref: string;
}

export interface UpstreamEventsTable {
  id: Generated<number>;
  project_id: string;
  upstream_id: string;
  scope: string;
  kind: string;
  at_ms: number;
}

export interface UpstreamWatchesTable {
  scope: string;
  holder: string;
  expires_at_ms: number;
}

export interface Database {
  upstream_events: UpstreamEventsTable;
  upstream_watches: UpstreamWatchesTable;
  payloads: PayloadsTable;
  tasks: TasksTable;
  task_events: TaskEventsTable;
  teams: TeamsTable;
  users: UsersTable;
  team_members: TeamMembersTable;
  user_tokens: UserTokensTable;
  projects: ProjectsTable;
  project_members: ProjectMembersTable;
  api_keys: ApiKeysTable;
  upstreams: UpstreamsTable;
  upstream_authorizations: UpstreamAuthorizationsTable;
  audit_events: AuditEventsTable;
  dashboard_sessions: DashboardSessionsTable;
  ended_mcp_sessions: EndedMcpSessionsTable;
  mcp_client_answers: McpClientAnswersTable;
  control_plane_generation: ControlPlaneGenerationTable;
  first_calls: FirstCallsTable;
  hosted_queue: HostedQueueTable;
  watch_hub: WatchHubTable;
  watch_hub_owners: WatchHubOwnersTable;
  approvals: ApprovalsTable;
  upstream_sessions: UpstreamSessionsTable;
  external_identities: ExternalIdentitiesTable;
  upstream_oauth_clients: UpstreamOAuthClientsTable;
  upstream_token_exchange: UpstreamTokenExchangeTable;
}
