/**
 * Issue 27: approvals (docs/approvals.md). A project's approval policy is JSON in
 * `projects.approval_policy` (null: none) with its version in `projects.approval_version` (every change,
 * removal included, adds one). `approvals` holds one row per call that waits (or waited) for sign-off:
 * what it is bound to (caller, upstream, tool, the SHA-256 of the canonical arguments, the policy
 * version), its state and the decisions made on it. The arguments themselves stay in the payload store
 * (encrypted), under the task's key.
 */
import type { Kysely, Migration } from 'kysely';

export const m0023Approvals: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('projects').addColumn('approval_policy', 'text').execute();
    await db.schema
      .alterTable('projects')
      .addColumn('approval_version', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createTable('approvals')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('task_key', 'text', (c) => c.notNull().unique())
      .addColumn('upstream', 'text', (c) => c.notNull())
      .addColumn('tool', 'text', (c) => c.notNull())
      .addColumn('caller_kind', 'text', (c) => c.notNull())
      .addColumn('caller_id', 'text', (c) => c.notNull())
      .addColumn('args_sha256', 'text', (c) => c.notNull())
      .addColumn('policy_version', 'integer', (c) => c.notNull())
      /** The policy's approvers, self-approval and count as they were at this version (JSON). */
      .addColumn('policy', 'text', (c) => c.notNull())
      /** `pending` | `approved` | `denied` | `expired` | `withdrawn` | `revoked`. */
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('decided_at', 'text')
      /** JSON array of `{ by, decision, comment?, at }`. */
      .addColumn('decisions', 'text', (c) => c.notNull())
      /** Payload id of the call's request (its arguments), kind `request`. */
      .addColumn('request_ref', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('approvals_project_status')
      .on('approvals')
      .columns(['project_id', 'status', 'created_at'])
      .execute();
  },
};
