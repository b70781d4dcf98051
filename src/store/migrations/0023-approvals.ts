/**
 * Issue 27: approvals (docs/approvals.md). A project's approval policy is JSON in
 * `projects.approval_policy` (null: none) with its version in `projects.approval_version` (every change,
 * removal included, adds one). `approvals` holds one row per call that waits (or waited) for sign-off:
 * what it is bound to (caller, upstream, tool, the SHA-256 of the canonical arguments, the policy
 * version), its state and the decisions made on it. The arguments themselves stay in the payload store
 * (encrypted), under the task's key.
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0023Approvals: Migration = ddlMigration(`
  alter table projects add column approval_policy text;
  alter table projects add column approval_version integer not null default 0;

  create table approvals (
    id text primary key,
    project_id text not null,
    task_key text not null unique,
    upstream text not null,
    tool text not null,
    caller_kind text not null,
    caller_id text not null,
    args_sha256 text not null,
    policy_version integer not null,
    -- The policy's approvers, self-approval and count as they were at this version (JSON).
    policy text not null,
    -- 'pending' | 'approved' | 'denied' | 'expired' | 'withdrawn' | 'revoked'.
    status text not null,
    created_at text not null,
    expires_at text not null,
    decided_at text,
    -- JSON array of { by, decision, comment?, at }.
    decisions text not null,
    -- Payload id of the call's request (its arguments), kind 'request'.
    request_ref text not null
  );
  create index approvals_project_status on approvals (project_id, status, created_at);
`);
