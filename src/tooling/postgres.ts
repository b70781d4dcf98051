/**
 * Launches a throwaway PostgreSQL cluster for tests and local development, like src/tooling/temporal-dev-server.ts
 * does for Temporal: `initdb` into a fresh temp directory, `postgres` on a free port bound to 127.0.0.1
 * (plus a unix socket in the temp directory), trust authentication, durability off. Stopping it removes
 * the directory. Uses the server binaries of the Debian packages (/usr/lib/postgresql/<major>/bin), see
 * scripts/install-postgres.sh.
 *
 * initdb and postgres refuse to run as root: as root, both run as the `postgres` system user (created
 * by the Debian package), which owns the temp directory.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  accessSync,
  chmodSync,
  chownSync,
  constants,
  existsSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { getFreePort, isPidAlive, OutputTail } from './processes';

export const POSTGRES_LIB_DIR = '/usr/lib/postgresql';

export interface StartPostgresOptions {
  /** Directory with `initdb` and `postgres`; default: findPostgresBinDir(). */
  binDir?: string;
  /** Where the temp directory is created; default os.tmpdir() (or /tmp when the postgres user can't reach it). */
  parentDir?: string;
  /** TCP port; 0 or undefined picks a free port. */
  port?: number;
  /** How long to wait for the server to accept connections (default 60000). */
  startupTimeoutMs?: number;
  /** Extra `-c name=value` server settings. */
  settings?: Record<string, string | number>;
}

export interface PostgresDevServer {
  /** Superuser URL of the `postgres` database, e.g. postgres://postgres@127.0.0.1:5433/postgres. */
  url: string;
  host: string;
  port: number;
  /** Directory of the unix socket (`psql -h <socketDir> -p <port> -U postgres`). */
  socketDir: string;
  dataDir: string;
  pid: number;
  /** Fast shutdown (SIGINT), SIGKILL after a grace period, then removes the temp directory. Idempotent. */
  stop(): Promise<void>;
}

const STOP_GRACE_MS = 10_000;
const SUPERUSER = 'postgres';

/** The newest /usr/lib/postgresql/<major>/bin that has both initdb and postgres, if any. */
export function findPostgresBinDir(libDir = POSTGRES_LIB_DIR): string | undefined {
  let majors: string[];
  try {
    majors = readdirSync(libDir);
  } catch {
    return undefined;
  }
  const candidates = majors
    .filter((m) => /^\d+(\.\d+)?$/.test(m))
    .sort((a, b) => Number(b) - Number(a))
    .map((m) => path.join(libDir, m, 'bin'));
  return candidates.find(
    (bin) => isExecutable(path.join(bin, 'initdb')) && isExecutable(path.join(bin, 'postgres')),
  );
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

interface RunAs {
  uid: number;
  gid: number;
}

/** As root: the `postgres` system user's ids. Otherwise undefined (run as ourselves). */
function runAsUser(): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  let out: string;
  try {
    out = execFileSync('getent', ['passwd', 'postgres'], { encoding: 'utf8' });
  } catch {
    throw new Error(
      'running as root, but there is no `postgres` system user to run PostgreSQL as (initdb and postgres ' +
        'refuse to run as root). Install the server with scripts/install-postgres.sh, which creates it.',
    );
  }
  const [, , uid, gid] = out.trim().split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/** True when every directory from / down to dir is traversable by others (the postgres user). */
function reachableByOthers(dir: string): boolean {
  let current = path.resolve(dir);
  for (;;) {
    try {
      if ((statSync(current).mode & 0o001) === 0) return false;
    } catch {
      return false;
    }
    const parent = path.dirname(current);
    if (parent === current) return true;
    current = parent;
  }
}

function run(file: string, args: readonly string[], as: RunAs | undefined, cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LC_ALL: 'C', LANG: 'C' },
      ...(as && { uid: as.uid, gid: as.gid }),
    });
    const out = new OutputTail();
    child.stdout?.on('data', (c: Buffer) => out.append(c));
    child.stderr?.on('data', (c: Buffer) => out.append(c));
    child.once('error', (err) => reject(new Error(`could not start ${file}: ${err.message}`)));
    child.once('exit', (code, signal) => {
      if (code === 0) resolve();
      else
        reject(
          new Error(
            `${path.basename(file)} failed (${signal ?? `exit code ${String(code)}`}):\n${out.tail()}`,
          ),
        );
    });
  });
}

function signalPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

async function canQuery(url: string, timeoutMs: number): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * initdb + postgres; resolves once the server answers queries. On failure everything started is stopped
 * and removed, and the error carries the tail of the server's output.
 */
export async function startPostgresDev(opts: StartPostgresOptions = {}): Promise<PostgresDevServer> {
  const binDir = opts.binDir ?? findPostgresBinDir();
  if (binDir === undefined) {
    throw new Error(
      `PostgreSQL server binaries not found (no ${POSTGRES_LIB_DIR}/<version>/bin with initdb and postgres). ` +
        'Install them as root with scripts/install-postgres.sh (Debian: apt-get install postgresql).',
    );
  }
  const as = runAsUser();
  let parent = opts.parentDir ?? os.tmpdir();
  if (as && opts.parentDir === undefined && !reachableByOthers(parent)) parent = '/tmp';
  const baseDir = mkdtempSync(path.join(parent, 'taskrouter-pg-'));
  const dataDir = path.join(baseDir, 'data');
  const socketDir = baseDir;
  const host = '127.0.0.1';
  const timeoutMs = opts.startupTimeoutMs ?? 60_000;
  chmodSync(baseDir, 0o700);
  if (as) chownSync(baseDir, as.uid, as.gid);

  try {
    await run(
      path.join(binDir, 'initdb'),
      [
        '-D',
        dataDir,
        '-U',
        SUPERUSER,
        '-A',
        'trust',
        '-E',
        'UTF8',
        '--locale=C',
        '--no-sync',
        '--no-instructions',
      ],
      as,
      baseDir,
    );
  } catch (err) {
    rmSync(baseDir, { recursive: true, force: true });
    throw err;
  }

  const autoPort = opts.port === undefined || opts.port === 0;
  const attempts = autoPort ? 3 : 1;
  let lastError: unknown;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const port = autoPort ? await getFreePort(host) : (opts.port as number);
    const settings: Record<string, string | number> = {
      listen_addresses: host,
      port,
      unix_socket_directories: socketDir,
      // Throwaway data: durability buys nothing and costs a lot of fsyncs on a CI box.
      fsync: 'off',
      synchronous_commit: 'off',
      full_page_writes: 'off',
      // Each gateway runtime (API and worker roles) has its own pool; tests run several at once.
      max_connections: 300,
      ...opts.settings,
    };
    const args = ['-D', dataDir];
    for (const [k, v] of Object.entries(settings)) args.push('-c', `${k}=${String(v)}`);
    const child: ChildProcess = spawn(path.join(binDir, 'postgres'), args, {
      cwd: baseDir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LC_ALL: 'C', LANG: 'C' },
      ...(as && { uid: as.uid, gid: as.gid }),
    });
    const output = new OutputTail();
    child.stdout?.on('data', (c: Buffer) => output.append(c));
    child.stderr?.on('data', (c: Buffer) => output.append(c));
    let ended = false;
    const exited = new Promise<string>((resolve) => {
      child.once('exit', (code, signal) => {
        ended = true;
        resolve(signal !== null ? `killed by ${signal}` : `exited with code ${String(code)}`);
      });
    });
    const spawned = await new Promise<number>((resolve, reject) => {
      child.once('error', (err) => reject(new Error(`could not start postgres: ${err.message}`)));
      child.once('spawn', () =>
        child.pid === undefined ? reject(new Error('postgres: no pid')) : resolve(child.pid),
      );
    }).catch((err: unknown) => {
      rmSync(baseDir, { recursive: true, force: true });
      throw err;
    });
    const pid = spawned;

    // If our own process exits without calling stop(): immediate shutdown (SIGQUIT also ends the backends)
    // and a best-effort removal of the throwaway directory.
    const onExit = (): void => {
      signalPid(pid, 'SIGQUIT');
      try {
        rmSync(baseDir, { recursive: true, force: true });
      } catch {
        // The server may still be writing; the OS cleans temp directories eventually.
      }
    };
    process.once('exit', onExit);

    let stopping: Promise<void> | undefined;
    const stopServer = (removeDir: boolean): Promise<void> => {
      stopping ??= (async () => {
        if (!ended) {
          // SIGINT = "fast shutdown": ends open sessions (SIGTERM would wait for every client to leave).
          signalPid(pid, 'SIGINT');
          const grace = new AbortController();
          const timer = sleep(STOP_GRACE_MS, 'timeout' as const, { signal: grace.signal }).catch(
            () => 'aborted',
          );
          const outcome = await Promise.race([exited, timer]);
          grace.abort();
          if (outcome === 'timeout') {
            signalPid(pid, 'SIGKILL');
            await exited;
          }
        }
        process.removeListener('exit', onExit);
        if (removeDir) rmSync(baseDir, { recursive: true, force: true });
      })();
      return stopping;
    };

    const url = `postgres://${SUPERUSER}@${host}:${port}/postgres`;
    const deadline = Date.now() + timeoutMs;
    let lastProbe = 'no attempt yet';
    let delay = 50;
    try {
      for (;;) {
        if (ended) throw new Error(`postgres ${await exited} before accepting connections\n${output.tail()}`);
        const remaining = deadline - Date.now();
        if (remaining <= 0) {
          throw new Error(
            `postgres on ${host}:${port} not ready after ${timeoutMs} ms (last error: ${lastProbe})\n${output.tail()}`,
          );
        }
        const failure = await canQuery(url, Math.max(200, Math.min(3000, remaining)));
        if (failure === undefined) break;
        lastProbe = failure;
        await Promise.race([sleep(delay), exited]);
        delay = Math.min(delay * 2, 500);
      }
    } catch (err) {
      await stopServer(false);
      lastError = err;
      const clash = /could not bind|address already in use/i.test(output.tail(100));
      if (clash && attempt < attempts) continue;
      rmSync(baseDir, { recursive: true, force: true });
      throw err;
    }

    return { url, host, port, socketDir, dataDir, pid, stop: () => stopServer(true) };
  }
  rmSync(baseDir, { recursive: true, force: true });
  throw lastError instanceof Error ? lastError : new Error('postgres did not start');
}

/** For callers that only kept the pid: fast shutdown, then SIGKILL. Never signals anything but this pid. */
export async function stopPostgresByPid(pid: number, dataDir?: string): Promise<void> {
  if (isPidAlive(pid)) {
    signalPid(pid, 'SIGINT');
    const deadline = Date.now() + STOP_GRACE_MS;
    while (isPidAlive(pid) && Date.now() < deadline) await sleep(50);
    if (isPidAlive(pid)) signalPid(pid, 'SIGKILL');
  }
  if (dataDir !== undefined && existsSync(dataDir))
    rmSync(path.dirname(dataDir), { recursive: true, force: true });
}
