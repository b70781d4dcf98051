/**
 * The production topology, stated once: what docker-compose.yml runs and what `npm run test:cluster`
 * runs on this machine. The cluster test starts exactly this (with loopback addresses and free ports in
 * place of Compose's service names), and test/deploy/compose.test.ts checks that the Compose file says
 * the same: Temporal version, dynamic config, server environment, gateway configuration, roles and
 * their commands.
 */
import path from 'node:path';
import { GATEWAY_NODE_FLAGS } from '../../src/config/node-flags';
import { TEMPORAL_SERVER_VERSION } from '../../src/tooling/temporal-server';

export const REPO_ROOT = path.join(__dirname, '../..');

/** temporalio/server and temporalio/admin-tools carry this tag; the cluster test builds the same release. */
export const TEMPORAL_VERSION = TEMPORAL_SERVER_VERSION;

/** The Temporal server's dynamic configuration, kept in the repository (relative to its root). */
export const DYNAMIC_CONFIG_FILE = 'config/temporal/dynamicconfig.yaml';

/** The gateway's configuration file (relative to the repository root); secrets come from the environment. */
export const GATEWAY_CONFIG_FILE = 'config/compose.json';

/** How each gateway role runs: the compiled entry point with the gateway's Node flags, one role per process. */
export const GATEWAY_ENTRY = ['node', ...GATEWAY_NODE_FLAGS, 'dist/src/main/serve.js'] as const;
export const GATEWAY_ROLES = ['api', 'worker'] as const;
export type GatewayRole = (typeof GATEWAY_ROLES)[number];

/** Replicas of each role in the cluster test (`docker compose up --scale api=2 --scale worker=2`). */
export const REPLICAS: Record<GatewayRole, number> = { api: 2, worker: 2 };

/** The example upstream, compiled, as its own process. */
export const UPSTREAM_ENTRY = ['node', 'dist/examples/upstream/main.js'] as const;

/** Temporal's databases and the gateway's, all on one PostgreSQL server. */
export const GATEWAY_DATABASE = 'taskrouter';

/**
 * The Temporal server's environment that is the same everywhere. With no configuration file the server
 * renders its embedded template from these (the temporalio/server image does the same).
 */
export const TEMPORAL_SERVER_ENV = {
  DB: 'postgres12',
  DBNAME: 'temporal',
  VISIBILITY_DBNAME: 'temporal_visibility',
  // Fixed when the cluster is first created; 512 leaves room to grow the history service.
  NUM_HISTORY_SHARDS: '512',
  // No authorizer: the frontend is reachable only from the gateway's network (Compose) or loopback.
  TEMPORAL_ALLOW_NO_AUTH: 'true',
  LOG_LEVEL: 'warn',
} as const;

/** The Temporal server's environment that each deployment sets for itself (addresses, credentials, file paths). */
export const TEMPORAL_SERVER_ENV_PER_DEPLOYMENT = [
  'DB_PORT',
  'POSTGRES_SEEDS',
  'POSTGRES_USER',
  'POSTGRES_PWD',
  'BIND_ON_IP',
  'DYNAMIC_CONFIG_FILE_PATH',
] as const;

/** The gateway's environment: the configuration file, then the secrets it leaves out. */
export const GATEWAY_ENV_KEYS = [
  'TASKROUTER_CONFIG',
  'TASKROUTER_POSTGRES_URL',
  'TASKROUTER_ENCRYPTION_KEYS',
  'TASKROUTER_ENCRYPTION_ACTIVE_KEY',
  'TASKROUTER_ADMIN_TOKEN',
] as const;

/** Ports of a server built from the embedded template, by the variable that sets each. */
export const TEMPORAL_PORT_VARIABLES = [
  'FRONTEND_GRPC_PORT',
  'FRONTEND_HTTP_PORT',
  'FRONTEND_MEMBERSHIP_PORT',
  'HISTORY_GRPC_PORT',
  'HISTORY_MEMBERSHIP_PORT',
  'MATCHING_GRPC_PORT',
  'MATCHING_MEMBERSHIP_PORT',
  'WORKER_GRPC_PORT',
  'WORKER_MEMBERSHIP_PORT',
] as const;
