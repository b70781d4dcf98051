/**
 * Brings up the cluster test's stack, piece by piece as docker-compose.yml does: PostgreSQL, Temporal's
 * schema job, the Temporal server, the gateway's database, the example upstream, the gateway's
 * configuration and its bootstrap (through the admin CLI), then the replicas behind the proxy.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import pg from 'pg';
import { generateKey } from '../../src/store/cipher';
import { getFreePort, isPortFree } from '../../src/tooling/processes';
import type { PostgresDevServer } from '../../src/tooling/postgres';
import type { TemporalServerProcess } from '../../src/tooling/temporal-cluster';
import {
  setupTemporalSchema,
  startTemporalServer,
  validateDynamicConfig,
} from '../../src/tooling/temporal-cluster';
import type { TemporalServerTools } from '../../src/tooling/temporal-server';
import { Replica, track } from './fleet';
import type { StdioSetup } from './stdio';
import type { GatewayRole } from './topology';
import {
  DYNAMIC_CONFIG_FILE,
  GATEWAY_CONFIG_FILE,
  GATEWAY_DATABASE,
  GATEWAY_ROLES,
  REPLICAS,
  REPO_ROOT,
  TEMPORAL_PORT_VARIABLES,
  TEMPORAL_SERVER_ENV,
  UPSTREAM_ENTRY,
} from './topology';

const WATCH_BY = process.env['CLUSTER_WATCH_BY'];
if (WATCH_BY !== undefined && WATCH_BY !== 'hub' && WATCH_BY !== 'activity') {
  throw new Error('CLUSTER_WATCH_BY must be hub or activity');
}

const run = promisify(execFile);

export const PROJECT = 'cluster';

/** Temporal's schema job, twice: `docker compose up` runs it again on every start, so it must be idempotent. */
export async function setupSchema(tools: TemporalServerTools, db: PostgresDevServer): Promise<void> {
  const connection = { host: db.host, port: db.port, user: 'postgres' };
  await setupTemporalSchema(tools.sqlTool, tools.postgresSchemaDir, connection);
  await setupTemporalSchema(tools.sqlTool, tools.postgresSchemaDir, connection);
}

/**
 * A free port below 32768: Temporal stores membership ports in a PostgreSQL `smallint`, and the kernel's
 * ephemeral range (where port 0 lands) starts above it.
 */
async function freeLowPort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (!taken.has(port) && (await isPortFree(port))) {
      taken.add(port);
      return port;
    }
  }
}

/**
 * The server with the Compose environment, on loopback and free ports, after its validator accepted the
 * dynamic config; resolves once the frontend answers on gRPC and on the HTTP path the Compose health
 * check uses.
 */
export async function startTemporal(
  tools: TemporalServerTools,
  db: PostgresDevServer,
): Promise<{ server: TemporalServerProcess; address: string }> {
  const dynamicConfig = path.join(REPO_ROOT, DYNAMIC_CONFIG_FILE);
  await validateDynamicConfig(tools.server, dynamicConfig);
  const ports: Record<string, string> = {};
  const taken = new Set<number>();
  for (const name of TEMPORAL_PORT_VARIABLES) ports[name] = String(await freeLowPort(taken));
  const server = await startTemporalServer(tools.server, {
    ...TEMPORAL_SERVER_ENV,
    ...ports,
    DB_PORT: String(db.port),
    POSTGRES_SEEDS: db.host,
    POSTGRES_USER: 'postgres',
    POSTGRES_PWD: '',
    BIND_ON_IP: '127.0.0.1',
    DYNAMIC_CONFIG_FILE_PATH: dynamicConfig,
  });
  const address = `127.0.0.1:${ports['FRONTEND_GRPC_PORT'] as string}`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (server.hasExited()) throw new Error(`the Temporal server exited:\n${server.tail()}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 3000 });
      try {
        await connection.withDeadline(Date.now() + 5000, () => connection.workflowService.getSystemInfo({}));
        const http = `http://127.0.0.1:${ports['FRONTEND_HTTP_PORT'] as string}/api/v1/system-info`;
        if ((await fetch(http, { signal: AbortSignal.timeout(5000) })).ok) return { server, address };
      } finally {
        await connection.close();
      }
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`the Temporal server did not serve in time: ${String(err)}`);
    }
    await sleep(1000);
  }
}

export async function createGatewayDatabase(db: PostgresDevServer): Promise<string> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${GATEWAY_DATABASE}`);
  } finally {
    await client.end();
  }
  return `postgres://postgres@${db.host}:${db.port}/${GATEWAY_DATABASE}`;
}

export interface UpstreamProcess {
  url: string;
  statsUrl: string;
  child: ChildProcess;
}

/** The compiled example upstream as its own process, with its call log served on `/stats`. */
export async function startUpstream(node: string): Promise<UpstreamProcess> {
  const port = await getFreePort();
  const child = spawn(node, [UPSTREAM_ENTRY[1]], {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', EXPOSE_STATS: '1' },
    stdio: 'ignore',
  });
  track(child);
  const statsUrl = `http://127.0.0.1:${port}/stats`;
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error('the example upstream exited');
    if (
      await fetch(statsUrl).then(
        (r) => r.ok,
        () => false,
      )
    )
      return { url: `http://127.0.0.1:${port}/mcp`, statsUrl, child };
    await sleep(200);
  }
  throw new Error('the example upstream did not start');
}

export interface Gateway {
  replicas: Replica[];
  token: string;
  env: Record<string, string>;
}

/**
 * The gateway's configuration is config/compose.json with this machine's addresses (one file per API
 * replica, whose ports differ); its secrets are environment variables, as in Compose. The first user,
 * team and project come from a bootstrap file applied with the compiled admin CLI.
 */
export async function prepareGateway(opts: {
  runDir: string;
  temporalAddress: string;
  postgresUrl: string;
  upstreamUrl: string;
  node: string;
  /** host:port clients reach the API through (the proxy), the `Host` they send. */
  publicHost: string;
  /** The stdio upstream every replica runs (stdio.ts): the configuration's `stdio` section and its project. */
  stdio: StdioSetup;
}): Promise<Gateway> {
  const token = `trp_cluster-${randomBytes(16).toString('hex')}`;
  const env: Record<string, string> = {
    TASKROUTER_POSTGRES_URL: opts.postgresUrl,
    TASKROUTER_ENCRYPTION_KEYS: `k1:${generateKey()}`,
    TASKROUTER_ENCRYPTION_ACTIVE_KEY: 'k1',
    TASKROUTER_ADMIN_TOKEN: randomBytes(24).toString('hex'),
    LOG_LEVEL: 'info',
  };
  const base = JSON.parse(readFileSync(path.join(REPO_ROOT, GATEWAY_CONFIG_FILE), 'utf8')) as Record<
    string,
    Record<string, unknown>
  >;
  const configFor = (name: string, port: number, healthPort?: number): string => {
    const file = path.join(opts.runDir, `${name}.json`);
    const config = {
      ...base,
      // The proxy's host, and the replica's own for the stdio checks' calls straight to each API replica.
      http: {
        ...base['http'],
        host: '127.0.0.1',
        port,
        allowedHosts: [opts.publicHost, `127.0.0.1:${port}`],
      },
      temporal: { ...base['temporal'], address: opts.temporalAddress },
      // Not in config/compose.json: the cluster test's own addition (docker-compose.yml runs no catalog).
      stdio: opts.stdio.config,
      // `CLUSTER_WATCH_BY=activity`: the same storm with tasks watched by watch activities (tasks.watchBy;
      // the default is the workers' watch hub).
      // The workflow adopting the API's watch hub row (tasks.hub.adoptApiEnlistment) is on whatever its
      // default, so the storm covers both first enlistments (workload.ts: tasks polled every 1 s and 2 s).
      tasks: {
        ...base['tasks'],
        ...(WATCH_BY !== undefined && { watchBy: WATCH_BY }),
        hub: { ...(base['tasks']?.['hub'] as object | undefined), adoptApiEnlistment: true },
      },
      ...(healthPort !== undefined && { health: { ...base['health'], port: healthPort } }),
    };
    writeFileSync(file, JSON.stringify(config, null, 2));
    return file;
  };
  const bootstrap = path.join(opts.runDir, 'bootstrap.json');
  writeFileSync(
    bootstrap,
    JSON.stringify({
      users: [{ handle: 'operator', name: 'Cluster operator', tokens: [{ name: 'cluster', token }] }],
      teams: [{ slug: 'ops', name: 'Operations', members: ['operator'] }],
      projects: [
        {
          slug: PROJECT,
          team: 'ops',
          namespacing: false,
          upstreams: [{ alias: 'example', url: opts.upstreamUrl }],
        },
        opts.stdio.project,
      ],
    }),
  );
  await run(opts.node, ['dist/src/main/admin-cli.js', 'bootstrap', '--file', bootstrap], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env, TASKROUTER_CONFIG: configFor('admin', 0) },
  });
  const replicas: Replica[] = [];
  for (const role of GATEWAY_ROLES as readonly GatewayRole[]) {
    for (let index = 1; index <= REPLICAS[role]; index++) {
      const ports = async () => {
        const port = role === 'api' ? await getFreePort() : 0;
        // Every process serves the health port (metrics live there); replicas on one host need their own.
        const healthPort = await getFreePort();
        return {
          ...(role === 'api' && { port }),
          healthPort,
          env: { ...env, TASKROUTER_CONFIG: configFor(`${role}-${index}`, port, healthPort) },
        };
      };
      replicas.push(
        new Replica({
          role,
          index,
          ...(await ports()),
          logDir: opts.runDir,
          node: opts.node,
          repickPorts: ports,
        }),
      );
    }
  }
  return { replicas, token, env };
}
