/**
 * The cluster test's processes: gateway replicas (`node dist/src/main/serve.js api|worker`) that can be
 * killed with SIGKILL and started again, each with its output kept in a log file of the run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { GatewayRole } from './topology';
import { GATEWAY_ENTRY, REPO_ROOT } from './topology';

export interface ReplicaOptions {
  role: GatewayRole;
  index: number;
  /** HTTP port of an API replica. */
  port?: number;
  /** The worker's own health port (`health.port`). */
  healthPort?: number;
  env: Record<string, string>;
  logDir: string;
  /** The Node binary that runs the compiled gateway. */
  node: string;
  /**
   * Other free ports (and the environment naming them), for a start that found its port taken: a port
   * picked free can be taken by another process's outgoing connection before the replica listens on it.
   */
  repickPorts?: () => Promise<Pick<ReplicaOptions, 'port' | 'healthPort' | 'env'>>;
}

/** How often a start whose port was taken is tried again on other ports. */
const PORT_RETRIES = 3;

/** Every process the run started and that may still run: killed at once if the run itself is stopped. */
const livePids = new Set<number>();

export function track(child: ChildProcess): void {
  const pid = child.pid;
  if (pid === undefined) return;
  livePids.add(pid);
  child.once('exit', () => livePids.delete(pid));
}

/** SIGKILLs whatever the run started that still runs (for an interrupted run; never anything else). */
export function killTracked(): void {
  for (const pid of livePids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** How long a replica may take to be ready on a loaded 2-core machine. */
const READY_TIMEOUT_MS = 120_000;

export class Replica {
  readonly name: string;
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private log: WriteStream;
  private output = '';
  starts = 0;

  constructor(private readonly opts: ReplicaOptions) {
    this.name = `${opts.role}-${opts.index}`;
    this.log = createWriteStream(path.join(opts.logDir, `${this.name}.log`), { flags: 'a' });
  }

  get port(): number | undefined {
    return this.opts.port;
  }

  /** The running process's id (its stdio processes are its children). */
  get pid(): number | undefined {
    return this.running ? this.child?.pid : undefined;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /**
   * Starts the process and waits until it is ready: `GET /readyz` answers 200 on the API's port or the
   * worker's health port, the same check as the Compose file's health checks.
   */
  async start(): Promise<void> {
    for (let retry = 0; ; retry++) {
      try {
        return await this.startOnce();
      } catch (err) {
        const taken = !this.running && /EADDRINUSE/.test(this.output);
        if (!taken || retry >= PORT_RETRIES || !this.opts.repickPorts) throw err;
        Object.assign(this.opts, await this.opts.repickPorts());
        this.log.write(`\n==== port taken; starting again on other ports ====\n`);
      }
    }
  }

  private async startOnce(): Promise<void> {
    const [node, args] = [this.opts.node, GATEWAY_ENTRY.slice(1)];
    this.starts++;
    this.output = '';
    this.log.write(`\n==== start #${this.starts} at ${new Date().toISOString()} ====\n`);
    const child = spawn(node, [...args, this.opts.role], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...this.opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    track(child);
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    const collect = (c: Buffer): void => {
      this.log.write(c);
      if (this.output.length < 256 * 1024) this.output += c.toString();
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (!(await this.ready())) {
      if (!this.running) throw new Error(`${this.name} exited while starting:\n${this.output.slice(-3000)}`);
      if (Date.now() > deadline) throw new Error(`${this.name} not ready after ${READY_TIMEOUT_MS} ms`);
      await sleep(200);
    }
  }

  private async ready(): Promise<boolean> {
    if (!this.running) return false;
    const port = this.opts.role === 'api' ? this.opts.port : this.opts.healthPort;
    try {
      const res = await fetch(`http://127.0.0.1:${String(port)}/readyz`, {
        signal: AbortSignal.timeout(2000),
      });
      return res.ok;
    } catch {
      return false;
    }
  }

  /** SIGKILL: no graceful anything. Resolves once the process is gone. */
  async kill9(): Promise<void> {
    if (!this.running) return;
    this.log.write(`\n==== SIGKILL at ${new Date().toISOString()} ====\n`);
    this.child?.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM (graceful stop), SIGKILL if it takes longer than `graceMs`. */
  async stop(graceMs = 30_000): Promise<void> {
    if (!this.running) return;
    this.child?.kill('SIGTERM');
    const outcome = await Promise.race([this.exited.then(() => 'exited'), sleep(graceMs, 'timeout')]);
    if (outcome === 'timeout') await this.kill9();
  }

  close(): void {
    this.log.end();
  }
}
