/**
 * Schema migrations, applied in order at start-up by Kysely's migrator. One file per migration, each its
 * DDL text (./ddl.ts); test/store/schema-snapshot.test.ts pins the schema they make.
 */
import type { Migration, MigrationProvider } from 'kysely';
import { m0001Tasks } from './0001-tasks';
import { m0002ControlPlane } from './0002-control-plane';
import { m0003TaskBinding } from './0003-task-binding';
import { m0004Retention } from './0004-retention';
import { m0005Payloads } from './0005-payloads';
import { m0006Dashboard } from './0006-dashboard';
import { m0007McpSessions } from './0007-mcp-sessions';
import { m0008UpstreamEras } from './0008-upstream-eras';
import { m0009ControlPlaneGeneration } from './0009-control-plane-generation';
import { m0010FirstCalls } from './0010-first-calls';
import { m0011TaskDetailStoredAt } from './0011-task-detail-stored-at';
import { m0012OAuth } from './0012-oauth';
import { m0013UpstreamEvents } from './0013-upstream-events';
import { m0015UpstreamOAuth } from './0015-upstream-oauth';
import { m0016UpstreamAddressApproval } from './0016-upstream-address-approval';
import { m0017TaskWatchDue } from './0017-task-watch-due';
import { m0018UpstreamTokenExchange } from './0018-upstream-token-exchange';
import { m0019FirstCallStates } from './0019-first-call-states';
import { m0020UpstreamHosting } from './0020-upstream-hosting';
import { m0021HostedQueue } from './0021-hosted-queue';
import { m0022TaskHosted } from './0022-task-hosted';
import { m0023Approvals } from './0023-approvals';
import { m0024ApiKeyCreator } from './0024-api-key-creator';
import { m0025WatchHub } from './0025-watch-hub';
import { m0026TaskAnsweredInputs } from './0026-task-answered-inputs';
import { m0027WatchHubOwners } from './0027-watch-hub-owners';
import { m0028AuthorizationRenewalLease } from './0028-authorization-renewal-lease';
import { m0029HostedQueueLookedAt } from './0029-hosted-queue-looked-at';

const migrations: Record<string, Migration> = {
  '0001_tasks': m0001Tasks,
  '0002_control_plane': m0002ControlPlane,
  '0003_task_binding': m0003TaskBinding,
  '0004_retention': m0004Retention,
  '0005_payloads': m0005Payloads,
  '0006_dashboard': m0006Dashboard,
  '0007_mcp_sessions': m0007McpSessions,
  '0008_upstream_eras': m0008UpstreamEras,
  '0009_control_plane_generation': m0009ControlPlaneGeneration,
  '0010_first_calls': m0010FirstCalls,
  '0011_task_detail_stored_at': m0011TaskDetailStoredAt,
  '0012_oauth': m0012OAuth,
  '0013_upstream_events': m0013UpstreamEvents,
  '0015_upstream_oauth': m0015UpstreamOAuth,
  '0016_upstream_address_approval': m0016UpstreamAddressApproval,
  '0017_task_watch_due': m0017TaskWatchDue,
  '0018_upstream_token_exchange': m0018UpstreamTokenExchange,
  '0019_first_call_states': m0019FirstCallStates,
  '0020_upstream_hosting': m0020UpstreamHosting,
  '0021_hosted_queue': m0021HostedQueue,
  '0022_task_hosted': m0022TaskHosted,
  '0023_approvals': m0023Approvals,
  '0024_api_key_creator': m0024ApiKeyCreator,
  '0025_watch_hub': m0025WatchHub,
  '0026_task_answered_inputs': m0026TaskAnsweredInputs,
  '0027_watch_hub_owners': m0027WatchHubOwners,
  '0028_authorization_renewal_lease': m0028AuthorizationRenewalLease,
  '0029_hosted_queue_looked_at': m0029HostedQueueLookedAt,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve(migrations),
};
