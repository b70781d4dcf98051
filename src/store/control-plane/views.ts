/**
 * What the admin API, the CLI and the dashboard are given back: plain records in camelCase, never a
 * hash, never a credential (an upstream says only whether one is set). The mappings from rows that more
 * than one module needs (teams, users) are here too; the others live with their aggregate.
 */
import type { HostingPolicy } from '../../config/hosting';
import type { ProjectRecord, UpstreamRecord } from './types';

export interface TeamView {
  id: string;
  slug: string;
  name: string;
  createdAt: string;
}

export interface UserView {
  id: string;
  handle: string;
  name: string;
  createdAt: string;
}

export interface TokenView {
  id: string;
  userId: string;
  name: string;
  /** Prefix and first characters, to recognise a token; not a secret. */
  hint: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
}

export interface ApiKeyView {
  id: string;
  projectId: string;
  name: string;
  hint: string;
  createdAt: string;
  revokedAt: string | null;
}

export interface UpstreamView extends Omit<UpstreamRecord, 'probe' | 'hosting'> {
  /**
   * The hosting policy (docs/admin.md, "Hosted tools"). `unmatched`: its rules that match none of the
   * upstream's tools, when the process answering knows them (the admin API adds it; absent otherwise).
   */
  hosting?: HostingPolicy & { unmatched?: string[] };
  /** Whether a project credential is stored (mode `project`); the credential itself is never shown. */
  credentialSet: boolean;
  createdAt: string;
  updatedAt: string;
  /**
   * The last probe: era (`modern` 2026-07-28, `legacy` 2025, null: none the gateway speaks, unreachable
   * or not probed yet), the version, when, and the problem found (docs/admin.md).
   */
  probe: {
    era: 'modern' | 'legacy' | null;
    protocolVersion: string | null;
    probedAt: string | null;
    error: string | null;
  };
}

export interface ProjectView extends Omit<ProjectRecord, 'upstreams'> {
  teamSlug: string;
  upstreams: UpstreamView[];
  createdAt: string;
  updatedAt: string;
}

export interface AuthorizationView {
  id: string;
  upstreamId: string;
  upstreamAlias: string;
  projectId: string;
  userId: string;
  status: 'active' | 'revoked' | 'expired';
  createdAt: string;
  updatedAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  /** A connection made with OAuth that renews itself on its next use (it holds a refresh token). */
  renewable: boolean;
}

export interface AuditRecord {
  id: string;
  at: string;
  projectId: string | null;
  actor: string;
  action: string;
  detail: Record<string, unknown> | null;
}

export interface MemberView extends UserView {
  since: string;
}

/** What an update did: the resulting record, and whether anything actually changed. */
export interface Updated<T> {
  record: T;
  changed: boolean;
}

export function toTeamView(row: { id: string; slug: string; name: string; created_at: string }): TeamView {
  return { id: row.id, slug: row.slug, name: row.name, createdAt: row.created_at };
}

export function toUserView(row: { id: string; handle: string; name: string; created_at: string }): UserView {
  return { id: row.id, handle: row.handle, name: row.name, createdAt: row.created_at };
}
