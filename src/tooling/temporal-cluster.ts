/**
 * Runs the real Temporal server (src/tooling/temporal-server.ts) the way docker-compose.yml does: its
 * schema job (the SQL tool creates and migrates `temporal` and `temporal_visibility`, idempotently), then
 * `temporal-server start` configured by environment variables alone. With no configuration file the
 * server renders its embedded template, the one the temporalio/server image uses, so the variables
 * below mean the same here and in Compose.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { OutputTail } from './processes';

const run = promisify(execFile);

export const TEMPORAL_DATABASES = [
  { name: 'temporal', schema: 'temporal' },
  { name: 'temporal_visibility', schema: 'visibility' },
] as const;

/**
 * The schema job's `temporal-sql-tool` calls after the connection flags, for the PostgreSQL schema
 * under `schemaDir` (`…/schema/postgresql/v12`). Each is idempotent: an existing database is kept,
 * `setup-schema -v 0.0` leaves a newer schema alone and `update-schema` only applies what is missing.
 */
export function temporalSchemaSteps(schemaDir: string): string[][] {
  return TEMPORAL_DATABASES.flatMap(({ name, schema }) => [
    ['--db', name, 'create-database'],
    ['--db', name, 'setup-schema', '-v', '0.0'],
    ['--db', name, 'update-schema', '-d', `${schemaDir}/${schema}/versioned`],
  ]);
}

export interface SqlConnection {
  host: string;
  port: number;
  user: string;
  password?: string;
}

/** Creates and migrates Temporal's two databases with the SQL tool, as the Compose schema job does. */
export async function setupTemporalSchema(
  sqlTool: string,
  schemaDir: string,
  db: SqlConnection,
): Promise<void> {
  const connect = ['--plugin', 'postgres12', '--ep', db.host, '-p', String(db.port), '-u', db.user];
  const env = { ...process.env, ...(db.password !== undefined && { SQL_PASSWORD: db.password }) };
  for (const step of temporalSchemaSteps(schemaDir)) {
    try {
      await run(sqlTool, [...connect, ...step], { env, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 });
    } catch (err) {
      const e = err as Error & { stderr?: string; stdout?: string };
      throw new Error(`temporal-sql-tool ${step.join(' ')} failed: ${e.stderr || e.stdout || e.message}`);
    }
  }
}

/**
 * `temporal-server validate-dynamic-config`: unknown keys and values of the wrong type are only warnings
 * there (exit code 0), so any warning fails here.
 */
export async function validateDynamicConfig(server: string, file: string): Promise<void> {
  const { stdout, stderr } = await run(server, ['validate-dynamic-config', file], { timeout: 60_000 });
  const warnings = `${stdout}\n${stderr}`.split('\n').filter((line) => /warning|error/i.test(line));
  if (warnings.length > 0) throw new Error(`${file} does not validate:\n${warnings.join('\n')}`);
}

export interface TemporalServerProcess {
  pid: number;
  child: ChildProcess;
  /** Ends the server: SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. Idempotent. */
  stop(graceMs?: number): Promise<void>;
  /** The last lines it printed. */
  tail(lines?: number): string;
  hasExited(): boolean;
}

/**
 * `temporal-server start` with `env` added to ours, and nothing else: no configuration file, so the
 * embedded template reads everything from the environment (DB, POSTGRES_SEEDS, BIND_ON_IP, ports,
 * DYNAMIC_CONFIG_FILE_PATH…). Resolves once it runs; readiness is the caller's (frontend health).
 */
export async function startTemporalServer(
  server: string,
  env: Record<string, string>,
): Promise<TemporalServerProcess> {
  const child: ChildProcess = spawn(server, ['start'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  const output = new OutputTail();
  child.stdout?.on('data', (c: Buffer) => output.append(c));
  child.stderr?.on('data', (c: Buffer) => output.append(c));
  let ended = false;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      ended = true;
      resolve();
    }),
  );
  const pid = await new Promise<number>((resolve, reject) => {
    child.once('error', (err) => reject(new Error(`could not start ${server}: ${err.message}`)));
    child.once('spawn', () => (child.pid === undefined ? reject(new Error('no pid')) : resolve(child.pid)));
  });
  let stopping: Promise<void> | undefined;
  return {
    pid,
    child,
    hasExited: () => ended,
    tail: (lines = 30) => output.tail(lines),
    stop(graceMs = 10_000) {
      stopping ??= (async () => {
        if (ended) return;
        child.kill('SIGTERM');
        const outcome = await Promise.race([exited.then(() => 'exited'), sleep(graceMs, 'timeout')]);
        if (outcome === 'timeout') {
          child.kill('SIGKILL');
          await exited;
        }
      })();
      return stopping;
    },
  };
}
