/**
 * What the benchmarks run as separate processes, the way users run them: the gateway through its
 * production entry point (`node dist/src/main/serve.js`, built first when dist/ is missing or stale) with
 * a configuration file and a bootstrap file, and example upstreams. Each process is stopped by
 * `cleanup()` (env.ts). The gateway's log (info level, as in production) goes to a file in the bench's
 * temp directory, read at the end for its warnings and errors.
 */
import type { ChildProcess, StdioOptions } from 'node:child_process';
import { execFileSync, fork, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomBytes, randomUUID } from 'node:crypto';
import type { ApprovalPolicyInput } from '../src/config/approvals';
import type { HostingPolicyInput } from '../src/config/hosting';
import { Client, Connection } from '@temporalio/client';
import { Agent } from 'undici';
import { GATEWAY_NODE_FLAGS } from '../src/config/node-flags';
import { findRepoRoot } from '../src/config/paths';
import { Cipher } from '../src/store/cipher';
import { createDataConverter } from '../src/temporal/codec';
import { getFreePort } from '../src/tooling/processes';
import type { DevServer } from '../src/tooling/temporal-dev-server';
import { gatewayBasics, note, onCleanup, startTemporal, tempDir } from './env';
import { McpHttpClient, sleep } from './support';
import type { Legacy2025Mode } from './upstream-2025';
import type {
  UpstreamCallTimesMessage,
  UpstreamProcessOptions,
  UpstreamStatsMessage,
} from './upstream-process';

export const ROOT = findRepoRoot(__dirname);

/** `npm run build` when dist/ is missing or older than a source (scripts/build.mjs --if-needed). */
export function buildIfNeeded(): void {
  note('building dist/ if missing or stale (npm run build)');
  execFileSync(process.execPath, ['scripts/build.mjs', '--if-needed'], { cwd: ROOT, stdio: 'inherit' });
}

/**
 * How a bench starts: the time it starts from, its options noted, dist/ built if missing or stale, a Temporal dev
 * server and a temporary directory (both cleaned up on exit).
 */
export async function startBench(opts: unknown): Promise<{ t0: number; temporal: DevServer; dir: string }> {
  const t0 = performance.now();
  note(`options ${JSON.stringify(opts)}`);
  buildIfNeeded();
  const temporal = await startTemporal();
  return { t0, temporal, dir: tempDir() };
}

/** Resident set size of a process, from /proc/<pid>/status (Linux), in bytes. */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(kb) * 1024;
}

/** CPU time (user + system) a process has used so far, in ms, from /proc/<pid>/stat (Linux, 100 Hz ticks). */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may contain spaces), from field 3 on: utime is 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * (1000 / CLOCK_TICKS);
}
export const CLOCK_TICKS = 100;

async function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

// ---------------------------------------------------------------------------------------------------
// Upstream

export interface UpstreamProcess {
  url: string;
  pid: number;
  /** The upstream's request counters, asked over IPC. */
  stats(): Promise<UpstreamStatsMessage['stats']>;
  /**
   * When the first tools/call of each label arrived (started with `recordCallTimes`; wall clock,
   * fractional ms, bench/upstream-process.ts); labels it never saw are absent.
   */
  callTimes(labels: readonly string[]): Promise<Record<string, number>>;
}

/**
 * Forks a bench process script through tsx and waits for its `{ type: 'ready', url, pid }`. `nice` runs it
 * at that lower CPU priority (`nice -n`): a process that stands for another machine (an attacking client,
 * a hostile upstream) then does not take the CPU of the process under test on this one.
 */
export async function forkReady(
  script: string,
  name: string,
  arg: unknown,
  opts: { nice?: number } = {},
): Promise<{ child: ChildProcess; url: string; pid: number }> {
  const args = ['--import', 'tsx', path.join(__dirname, script), JSON.stringify(arg)];
  const stdio: StdioOptions = ['ignore', 'inherit', 'inherit', 'ipc'];
  const child =
    opts.nice === undefined
      ? fork(path.join(__dirname, script), [JSON.stringify(arg)], {
          cwd: ROOT,
          execArgv: ['--import', 'tsx'],
          stdio,
        })
      : spawn('nice', ['-n', String(opts.nice), process.execPath, ...args], { cwd: ROOT, stdio });
  onCleanup(`upstream ${name}`, () => stopChild(child, 5000));
  const ready = await new Promise<{ url: string; pid: number }>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`upstream ${name} exited (${code}) before it was ready`)));
    child.on('message', (m: { type?: string; url?: string; pid?: number }) => {
      if (m.type === 'ready' && m.url && m.pid) resolve({ url: m.url, pid: m.pid });
    });
  });
  return { child, ...ready };
}

/**
 * A 2025-era upstream (SDK 1.x, bench/upstream-2025.ts) with the example upstream's `work {ms}` tool, in
 * a process of its own; `stateful` keeps a session per `initialize` and answers as SSE.
 */
export async function startLegacyUpstreamProcess(
  name: string,
  mode: Legacy2025Mode = 'stateful',
): Promise<{ url: string; pid: number }> {
  const { url, pid } = await forkReady('upstream-2025.ts', name, { mode });
  return { url, pid };
}

/** The example upstream (examples/upstream/server.ts) in a process of its own (bench/upstream-process.ts). */
export async function startUpstreamProcess(
  name: string,
  opts: UpstreamProcessOptions = {},
): Promise<UpstreamProcess> {
  const { child, ...ready } = await forkReady('upstream-process.ts', name, { name, ...opts });
  let nextId = 0;
  const ask = <M extends { type: string; id: number }>(type: M['type'], extra: object = {}) => {
    const id = ++nextId;
    return new Promise<M>((resolve) => {
      const onMessage = (m: Partial<M>) => {
        if (m.type !== type || m.id !== id) return;
        child.off('message', onMessage);
        resolve(m as M);
      };
      child.on('message', onMessage);
      child.send({ type, id, ...extra });
    });
  };
  return {
    ...ready,
    async stats() {
      return (await ask<UpstreamStatsMessage>('stats')).stats;
    },
    async callTimes(labels) {
      return (await ask<UpstreamCallTimesMessage>('callTimes', { labels })).times;
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// Gateway

/** A user of the bootstrap file, with the bearer token it presents. */
export interface BenchUser {
  handle: string;
  token: string;
}

/** `count` users with fresh personal access tokens (`trp_` + 43 base64url characters, as minted). */
export function benchUsers(count: number, prefix = 'bench'): BenchUser[] {
  return Array.from({ length: count }, (_, i) => ({
    handle: `${prefix}-${i}`,
    token: `trp_${randomBytes(32).toString('base64url')}`,
  }));
}

export interface GatewayProject {
  slug: string;
  /** `hosting`: the upstream's hosting policy (docs/hosted-tasks.md), as the bootstrap file takes it. */
  upstreams: Array<{ alias: string; url: string; hosting?: HostingPolicyInput }>;
  /** The project's approval policy (docs/approvals.md), as the bootstrap file takes it. */
  approvals?: ApprovalPolicyInput;
}

export interface GatewayProcess {
  /** `http://127.0.0.1:<port>`; MCP endpoints are `${url}/v1/mcp/<slug>`. */
  url: string;
  pid: number;
  /** What the configuration file says (the encryption keys decode task workflows' payloads). */
  config: ReturnType<typeof gatewayBasics>;
  rssBytes(): number;
  /** SIGTERM (SIGKILL after 10 s); resolves once it exited (it is stopped on exit anyway). */
  stop(): Promise<void>;
  /** Warnings and errors in the gateway's log so far, with the five most frequent messages and counts. */
  log(): { warnings: number; errors: number; samples: string[] };
}

/**
 * `node dist/src/main/serve.js <role>` with default settings: only what a deployment must say (HTTP
 * address, Temporal, store, key) and a bootstrap file declaring `users`, one team `bench` they all belong
 * to and `projects` owned by it, created with the defaults (authentication required, namespacing on,
 * cache on). Resolves once the process logged `taskrouter started`.
 */
export async function startGatewayProcess(opts: {
  temporal: Pick<DevServer, 'address' | 'namespace'>;
  dir: string;
  users: readonly BenchUser[];
  projects: readonly GatewayProject[];
  role?: 'all' | 'api' | 'worker';
  /** Further configuration sections (e.g. `streams` for a benchmark that holds thousands of streams). */
  sections?: Record<string, unknown>;
  /**
   * Another checkout whose built `dist/` runs instead of this one's (a "before" side measured in the same
   * run); it is not built here.
   */
  root?: string;
  /** What several processes of one gateway share (its task queue and keys); default: fresh ones. */
  basics?: ReturnType<typeof gatewayBasics>;
}): Promise<GatewayProcess> {
  const role = opts.role ?? 'all';
  const port = await getFreePort();
  const bootstrapFile = path.join(opts.dir, 'bootstrap.json');
  writeFileSync(
    bootstrapFile,
    JSON.stringify({
      users: opts.users.map((u) => ({ handle: u.handle, tokens: [{ name: 'bench', token: u.token }] })),
      teams: [{ slug: 'bench', members: opts.users.map((u) => u.handle) }],
      projects: opts.projects.map((p) => ({
        slug: p.slug,
        team: 'bench',
        upstreams: p.upstreams,
        ...(p.approvals && { approvals: p.approvals }),
      })),
    }),
  );
  const basics = opts.basics ?? gatewayBasics(opts.temporal, opts.dir);
  const configFile = path.join(opts.dir, 'taskrouter.json');
  writeFileSync(
    configFile,
    JSON.stringify(
      {
        ...basics,
        http: { ...basics.http, port },
        bootstrapFile,
        ...opts.sections,
        // A `temporal` section adds to the connection's settings rather than replacing them.
        temporal: { ...basics.temporal, ...(opts.sections?.['temporal'] as object | undefined) },
      },
      null,
      2,
    ),
  );

  const logFile = path.join(opts.dir, `gateway-${randomUUID().slice(0, 8)}.log`);
  const fd = openSync(logFile, 'a');
  const env: NodeJS.ProcessEnv = { ...process.env, TASKROUTER_CONFIG: configFile, LOG_LEVEL: 'info' };
  delete env['TASKROUTER_ENCRYPTION_KEYS'];
  delete env['TASKROUTER_ADMIN_TOKEN'];
  // The gateway's own Node flags, then the bench's, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` (written
  // when it stops); a flag given twice takes the later value.
  const nodeArgs = (process.env['BENCH_GATEWAY_NODE_ARGS'] ?? '').split(/\s+/).filter(Boolean);
  const child = spawn(
    process.execPath,
    [...GATEWAY_NODE_FLAGS, ...nodeArgs, 'dist/src/main/serve.js', role],
    {
      cwd: opts.root ?? ROOT,
      env,
      stdio: ['ignore', fd, fd],
    },
  );
  closeSync(fd);
  onCleanup('gateway', () => stopChild(child, 10_000));
  const pid = child.pid;
  if (pid === undefined) throw new Error('the gateway process did not start');

  const readLog = () => readFileSync(logFile, 'utf8');
  const deadline = Date.now() + 120_000;
  while (!readLog().includes('"taskrouter started"')) {
    if (child.exitCode !== null) throw new Error(`the gateway exited (${child.exitCode}):\n${readLog()}`);
    if (Date.now() > deadline) throw new Error(`the gateway was not ready after 120 s:\n${readLog()}`);
    await sleep(50);
  }
  note(`gateway pid ${pid} (serve ${role}) at http://127.0.0.1:${port}, log ${logFile}`);
  return {
    url: `http://127.0.0.1:${port}`,
    pid,
    config: basics,
    rssBytes: () => rssBytes(pid),
    stop: () => stopChild(child, 10_000),
    log() {
      let warnings = 0;
      let errors = 0;
      /** Distinct warning and error messages (numbers as N) with their counts. */
      const distinct = new Map<string, number>();
      for (const line of readLog().split('\n')) {
        if (!line.trim()) continue;
        // Node's own lines when a bench runs the gateway with --inspect (bench:scale's live heap).
        if (/^(Debugger (listening|attached|ending)|For help, see: )/.test(line)) continue;
        let level = 0;
        let msg = line;
        try {
          const parsed = JSON.parse(line) as {
            level?: number;
            msg?: string;
            err?: { type?: string; message?: string } | string;
          };
          level = parsed.level ?? 0;
          const err = parsed.err;
          const why = typeof err === 'object' ? `${err.type ?? 'Error'}: ${err.message ?? ''}` : err;
          msg = `${parsed.msg ?? ''}${why === undefined ? '' : ` (${why})`}`;
        } catch {
          level = 50; // not pino's JSON: a crash or a stray print
        }
        if (level >= 50) errors++;
        else if (level >= 40) warnings++;
        if (level >= 40) {
          const key = msg.replace(/\d+(\.\d+)?/g, 'N').slice(0, 160);
          distinct.set(key, (distinct.get(key) ?? 0) + 1);
        }
      }
      const samples = [...distinct.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 5)
        .map(([m, n]) => `${n} x ${m}`);
      return { warnings, errors, samples };
    },
  };
}

/** The HTTP agent of a bench's calls (closed on exit) and an MCP client of the `bench` project as its first user. */
export function benchClient(
  gateway: Pick<GatewayProcess, 'url'>,
  users: readonly BenchUser[],
): { agent: Agent; client: McpHttpClient } {
  const agent = new Agent({ keepAliveTimeout: 30_000, headersTimeout: 120_000, bodyTimeout: 120_000 });
  onCleanup('http agent', () => agent.close());
  const [user] = users;
  if (!user) throw new Error('no user');
  return { agent, client: new McpHttpClient(`${gateway.url}/v1/mcp/bench`, agent, { token: user.token }) };
}

/** A Temporal client that reads the gateway's task workflows (its data converter, with its keys); closed on exit. */
export async function gatewayTemporalClient(
  temporal: Pick<DevServer, 'address' | 'namespace'>,
  gateway: Pick<GatewayProcess, 'config'>,
): Promise<Client> {
  const connection = await Connection.connect({ address: temporal.address });
  onCleanup('temporal client', () => connection.close());
  return new Client({
    connection,
    namespace: temporal.namespace,
    dataConverter: createDataConverter(new Cipher(gateway.config.encryption)),
  });
}

/** The `bench` project, with one upstream alias per upstream process (named as the keys). */
export function benchProject(upstreams: Record<string, { url: string }>): GatewayProject {
  return { slug: 'bench', upstreams: Object.entries(upstreams).map(([alias, u]) => ({ alias, url: u.url })) };
}

/**
 * The HTTP agents of a bench that both calls and follows listen streams: one for calls, one without a body
 * timeout for the streams; both closed on exit.
 */
export function callAndStreamAgents(): { agent: Agent; streamAgent: Agent } {
  const agent = new Agent({ keepAliveTimeout: 30_000, headersTimeout: 120_000, bodyTimeout: 120_000 });
  const streamAgent = new Agent({ keepAliveTimeout: 30_000, headersTimeout: 120_000, bodyTimeout: 0 });
  onCleanup('http agents', async () => {
    await Promise.all([agent.close(), streamAgent.destroy()]);
  });
  return { agent, streamAgent };
}
