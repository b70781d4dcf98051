/**
 * The gateway as a real child process (`serve.ts`, through tsx) against the shared Temporal test server,
 * for tests about processes: crashes, signals, exit codes.
 */
import type { ChildProcess, StdioOptions } from 'node:child_process';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { generateKey } from '../../src/store/cipher';
import { testTemporal } from './temporal';

export const REPO_ROOT = path.join(__dirname, '../..');

/** A project anyone may call (`authMode: anonymous`), namespacing off, on `upstream`; `extra` adds settings. */
export function anonymousProject(
  slug: string,
  upstream: { alias: string; url: string } & Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { slug, authMode: 'anonymous', namespacing: false, upstreams: [upstream], ...extra };
}

/**
 * Writes `dir/config.json`: HTTP on `port`, a fresh task queue, the given store, a fresh key, and project
 * `demo` (anonymous, namespacing off) on `upstreamUrl`; `http` and `projects` add to those, `sections`
 * adds top-level sections (e.g. `upstreams`, `admin`).
 */
export function writeServeConfig(
  dir: string,
  opts: {
    port: number;
    upstreamUrl: string;
    store: Record<string, unknown>;
    http?: Record<string, unknown>;
    /** Added to `tasks`. */
    tasks?: Record<string, unknown>;
    projects?: Array<Record<string, unknown>>;
    /** Further top-level sections (`streams`, `health`, `bootstrapFile`…). */
    sections?: Record<string, unknown>;
  },
): string {
  const temporal = testTemporal();
  const file = path.join(dir, 'config.json');
  writeFileSync(
    file,
    JSON.stringify({
      http: { host: '127.0.0.1', port: opts.port, ...opts.http },
      temporal: {
        address: temporal.address,
        namespace: temporal.namespace,
        taskQueue: `serve-${randomUUID()}`,
      },
      store: opts.store,
      encryption: { activeKeyId: 'k1', keys: { k1: generateKey() } },
      tasks: { minPollIntervalMs: 50, ...opts.tasks },
      projects: [
        anonymousProject('demo', { alias: 'example', url: opts.upstreamUrl }),
        ...(opts.projects ?? []),
      ],
      ...opts.sections,
    }),
  );
  return file;
}

/** Which roles a gateway process runs, and modules Node loads before it (test-only preloads). */
export interface ServeProcessOptions {
  role?: 'api' | 'worker' | 'all';
  /** Paths (from the repository root) given to Node with `--import`, after tsx. */
  imports?: string[];
}

/**
 * Starts `serve.ts all` (or the role `opts` names). Node itself runs the gateway (tsx as a loader, not
 * as a wrapper process), so signals reach the gateway.
 */
export function spawnServe(
  configFile: string,
  logLevel: string,
  stdio: StdioOptions,
  env: Record<string, string> = {},
  opts: ServeProcessOptions = {},
): ChildProcess {
  const imports = (opts.imports ?? []).flatMap((m) => ['--import', `./${m}`]);
  const args = ['--import', 'tsx', ...imports, 'src/main/serve.ts', opts.role ?? 'all'];
  return spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, TASKROUTER_CONFIG: configFile, LOG_LEVEL: logLevel, ...env },
    stdio,
  });
}

/** SIGKILLs `child` (as a crash would end it) and waits for it to exit. */
export async function killProcess(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

/** SIGKILLs whichever of `children` still run and waits for them to exit. */
export async function killChildren(children: readonly ChildProcess[]): Promise<void> {
  for (const c of children) {
    if (c.exitCode === null && c.signalCode === null) await killProcess(c);
  }
}

/** Polls `done` every 50 ms; throws `failure()` after `timeoutMs`. */
export async function waitFor(done: () => boolean, failure: () => string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(failure());
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Starts `serve.ts all` (logging at `logLevel` to a captured stderr) and resolves once it answers
 * `/readyz` on `port` — its worker is polling, not only its HTTP server listening (a task created
 * before that waits for the worker, up to the start deadline, on a loaded machine); `children` gets the
 * process, for killChildren. `env` adds to the environment. With `opts.role` 'worker', `port` is the
 * worker's `health.port`.
 */
export async function startServeProcess(
  configFile: string,
  port: number,
  children: ChildProcess[],
  logLevel = 'warn',
  env: Record<string, string> = {},
  opts: ServeProcessOptions = {},
): Promise<ChildProcess> {
  const child = spawnServe(configFile, logLevel, ['ignore', 'ignore', 'pipe'], env, opts);
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`gateway process exited: ${stderr}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`);
      if (res.ok) return child;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`gateway process did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
