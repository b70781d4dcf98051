/**
 * Launches `temporal server start-dev` as a child process and waits until it really serves the namespace.
 *
 * We do not use `@temporalio/testing`'s `createLocal`: it would download a CLI unless given a path, and it allows
 * only ~5 s for start-up, which is too tight on a loaded 2-core CI box (temporal-notes §2, §8).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import type { SearchAttributeType } from '@temporalio/common';
// SearchAttributeKey is not re-exported from the package index (1.24); @temporalio/testing imports it this way too.
import type { SearchAttributeKey } from '@temporalio/common/lib/search-attributes';
import { grpc } from '@temporalio/proto';
import { getFreePort, isPortFree, OutputTail, signalPid } from './processes';
import { resolveTemporalCli } from './temporal-cli';

export interface StartDevServerOptions {
  /** Namespace created at start-up (in addition to `default`, which the dev server always creates). */
  namespace: string;
  /** SQLite file for persistence; undefined = in-memory (state is lost when the process exits). */
  dbFile?: string;
  /** Frontend gRPC port; 0 or undefined picks a free port. */
  port?: number;
  /** Serve the Web UI (default false, i.e. `--headless`). */
  ui?: boolean;
  /** Web UI port; defaults to port+1000 when that is free, else another free port. */
  uiPort?: number;
  /** Bind address (default 127.0.0.1, so nothing is exposed beyond this machine). */
  ip?: string;
  /** Custom search attributes registered in every start-up namespace. */
  searchAttributes?: readonly SearchAttributeKey<SearchAttributeType>[];
  /** Extra dynamic config; values are JSON-encoded for `--dynamic-config-value KEY=JSON`. */
  dynamicConfig?: Record<string, unknown>;
  /** Server log level: debug, info, warn, error, never (default error: keeps test output quiet). */
  logLevel?: string;
  /** How long to wait for the server to answer health checks and know the namespace (default 60000). */
  startupTimeoutMs?: number;
  /** Path of the `temporal` binary; default: resolveTemporalCli() without installing. */
  cliPath?: string;
  /** Extra arguments appended to the command line. */
  extraArgs?: readonly string[];
}

export interface DevServer {
  /** host:port of the frontend gRPC service, for `Connection.connect({ address })`. */
  address: string;
  uiUrl?: string;
  pid: number;
  namespace: string;
  /** SIGTERM, then SIGKILL after a grace period; resolves once the process has exited. Idempotent. */
  stop(): Promise<void>;
}

/** CLI spelling of each SDK search attribute type (`--search-attribute Name=Type`). */
const CLI_SEARCH_ATTRIBUTE_TYPES: Record<SearchAttributeType, string> = {
  TEXT: 'Text',
  KEYWORD: 'Keyword',
  INT: 'Int',
  DOUBLE: 'Double',
  BOOL: 'Bool',
  DATETIME: 'Datetime',
  KEYWORD_LIST: 'KeywordList',
};

const STOP_GRACE_MS = 5000;

function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** A cheap TCP connect so we don't pay gRPC's ~1 s reconnect backoff while the port is still closed. */
function tcpReachable(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ host, port });
    const done = (ok: boolean): void => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}

/** One readiness probe: frontend reports SERVING and the namespace is registered. Throws otherwise. */
async function probe(address: string, namespace: string, timeoutMs: number): Promise<void> {
  // No retry interceptor: the caller's loop owns retries and the overall deadline.
  const connection = await Connection.connect({ address, connectTimeout: timeoutMs, interceptors: [] });
  try {
    const health = await connection.withDeadline(Date.now() + timeoutMs, () =>
      connection.healthService.check({ service: 'temporal.api.workflowservice.v1.WorkflowService' }),
    );
    if (health.status !== grpc.health.v1.HealthCheckResponse.ServingStatus.SERVING) {
      throw new Error(`health status ${String(health.status)}`);
    }
    await connection.withDeadline(Date.now() + timeoutMs, () =>
      connection.workflowService.describeNamespace({ namespace }),
    );
  } finally {
    await connection.close();
  }
}

interface Spawned {
  child: ChildProcess;
  pid: number;
  stderr: OutputTail;
  stdout: OutputTail;
  /** Resolves with a description of how the process ended. */
  exited: Promise<string>;
  hasExited(): boolean;
}

function spawnServer(cli: string, args: readonly string[]): Promise<Spawned> {
  return new Promise((resolve, reject) => {
    const child = spawn(cli, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      // Belt and braces next to the dynamic config flag: no phoning home for version checks.
      env: { ...process.env, TEMPORAL_VERSION_CHECK_DISABLED: '1' },
    });
    const stdout = new OutputTail();
    const stderr = new OutputTail();
    child.stdout?.on('data', (c: Buffer) => stdout.append(c));
    child.stderr?.on('data', (c: Buffer) => stderr.append(c));
    let ended = false;
    const exited = new Promise<string>((res) => {
      child.once('exit', (code, signal) => {
        ended = true;
        res(signal !== null ? `killed by ${signal}` : `exited with code ${String(code)}`);
      });
    });
    child.once('error', (err) => reject(new Error(`could not start ${cli}: ${err.message}`)));
    child.once('spawn', () => {
      if (child.pid === undefined) {
        reject(new Error(`could not start ${cli}: no pid`));
        return;
      }
      resolve({ child, pid: child.pid, stdout, stderr, exited, hasExited: () => ended });
    });
  });
}

function describeOutput(s: Spawned): string {
  const err = s.stderr.tail();
  const out = s.stdout.tail(10);
  return [err && `--- stderr (tail) ---\n${err}`, out && `--- stdout (tail) ---\n${out}`]
    .filter(Boolean)
    .join('\n');
}

class StartupError extends Error {
  constructor(
    message: string,
    readonly exitedEarly: boolean,
    readonly output: string,
  ) {
    super(message);
    this.name = 'StartupError';
  }
}

async function waitUntilReady(
  s: Spawned,
  host: string,
  port: number,
  namespace: string,
  timeoutMs: number,
): Promise<void> {
  const address = hostPort(host, port);
  const deadline = Date.now() + timeoutMs;
  let delay = 50;
  let lastError = 'no attempt yet';
  for (;;) {
    if (s.hasExited()) {
      const how = await s.exited;
      throw new StartupError(
        `temporal dev server ${how} before becoming ready\n${describeOutput(s)}`,
        true,
        describeOutput(s),
      );
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      throw new StartupError(
        `temporal dev server at ${address} not ready after ${timeoutMs} ms (last error: ${lastError})\n` +
          describeOutput(s),
        false,
        describeOutput(s),
      );
    }
    const attemptMs = Math.max(200, Math.min(3000, remaining));
    try {
      if (!(await tcpReachable(host, port, attemptMs)))
        throw new Error(`port ${port} not accepting connections`);
      await probe(address, namespace, attemptMs);
      return;
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    }
    // Short first waits (in-memory start-up takes ~1-3 s), backing off to 1 s to stay cheap on slow boxes.
    await Promise.race([sleep(Math.min(delay, Math.max(0, deadline - Date.now()))), s.exited]);
    delay = Math.min(delay * 2, 1000);
  }
}

function buildArgs(
  opts: StartDevServerOptions,
  ip: string,
  port: number,
  uiPort: number | undefined,
  dbFile: string | undefined,
): string[] {
  const args = ['server', 'start-dev', '--ip', ip, '--port', String(port), '--namespace', opts.namespace];
  if (uiPort !== undefined) {
    // The UI would otherwise fetch a news feed from the internet in the operator's browser.
    args.push('--ui-port', String(uiPort), '--ui-disable-news-fetch');
  } else {
    args.push('--headless');
  }
  for (const key of opts.searchAttributes ?? []) {
    args.push('--search-attribute', `${key.name}=${CLI_SEARCH_ATTRIBUTE_TYPES[key.type]}`);
  }
  // The server's periodic version check calls out to the internet; tests and offline boxes must not.
  const dynamicConfig: Record<string, unknown> = {
    'frontend.enableServerVersionCheck': false,
    ...opts.dynamicConfig,
  };
  for (const [k, v] of Object.entries(dynamicConfig)) {
    args.push('--dynamic-config-value', `${k}=${JSON.stringify(v)}`);
  }
  if (dbFile !== undefined) args.push('--db-filename', dbFile);
  args.push('--log-level', opts.logLevel ?? 'error');
  args.push(...(opts.extraArgs ?? []));
  return args;
}

async function pickUiPort(ip: string, port: number): Promise<number> {
  // Match the CLI's own convention (port+1000) when possible, so the URL is predictable.
  const preferred = port + 1000;
  if (preferred <= 65535 && (await isPortFree(preferred, ip))) return preferred;
  return getFreePort(ip);
}

/**
 * Starts `temporal server start-dev` and resolves once the frontend is SERVING and `namespace` exists.
 * On failure the process is killed and the error carries the tail of its output.
 */
export async function startDevServer(opts: StartDevServerOptions): Promise<DevServer> {
  const cli = opts.cliPath ?? (await resolveTemporalCli());
  const ip = opts.ip ?? '127.0.0.1';
  const timeoutMs = opts.startupTimeoutMs ?? 60_000;
  const dbFile = opts.dbFile !== undefined ? path.resolve(opts.dbFile) : undefined;
  if (dbFile !== undefined) await mkdir(path.dirname(dbFile), { recursive: true });

  // A port picked by us can be grabbed by someone else before the server binds it (parallel CI jobs);
  // in that case the server exits at once and we try again with a new port. Fixed ports get one attempt.
  const autoPort = opts.port === undefined || opts.port === 0;
  const attempts = autoPort ? 3 : 1;
  let lastError: unknown;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const port = autoPort ? await getFreePort(ip) : (opts.port as number);
    const uiPort = opts.ui === true ? (opts.uiPort ?? (await pickUiPort(ip, port))) : undefined;
    const s = await spawnServer(cli, buildArgs(opts, ip, port, uiPort, dbFile));

    // If our own process exits without calling stop(), don't leave an orphaned server behind.
    const killOnExit = (): void => signalPid(s.pid, 'SIGKILL');
    process.once('exit', killOnExit);

    let stopping: Promise<void> | undefined;
    const stop = (): Promise<void> => {
      stopping ??= (async () => {
        if (!s.hasExited()) {
          signalPid(s.pid, 'SIGTERM');
          // Cancel the grace timer once the process is gone: a pending timer would keep jest workers alive.
          const grace = new AbortController();
          const timer = sleep(STOP_GRACE_MS, 'timeout' as const, { signal: grace.signal }).catch(
            () => 'aborted',
          );
          const outcome = await Promise.race([s.exited, timer]);
          grace.abort();
          if (outcome === 'timeout') {
            signalPid(s.pid, 'SIGKILL');
            await s.exited;
          }
        }
        process.removeListener('exit', killOnExit);
      })();
      return stopping;
    };

    try {
      await waitUntilReady(s, ip, port, opts.namespace, timeoutMs);
    } catch (err) {
      await stop();
      lastError = err;
      const clash =
        err instanceof StartupError && err.exitedEarly && /address already in use/i.test(err.output);
      if (clash && attempt < attempts) continue;
      throw err;
    }

    return {
      address: hostPort(ip, port),
      ...(uiPort !== undefined ? { uiUrl: `http://${hostPort(ip, uiPort)}` } : {}),
      pid: s.pid,
      namespace: opts.namespace,
      stop,
    };
  }
  throw lastError instanceof Error ? lastError : new Error('temporal dev server did not start');
}
