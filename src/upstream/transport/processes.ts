/**
 * One local MCP server process of the stdio transport (stdio.ts): how it is launched from its catalog
 * entry (src/config/stdio.ts), its stdout read as newline-delimited JSON-RPC within a bound, its stderr
 * logged within a budget with secrets redacted, and how it is stopped.
 *
 * Launch: the catalog's environment only (its `env`, the `inheritEnv` names copied from the gateway's,
 * settable values it passes in variables, the credential in `credentialEnv`), never the rest of the
 * gateway's. Where the tools exist (Linux util-linux), the command runs under `setpriv --pdeathsig
 * KILL` (the kernel kills it when the gateway dies, even by SIGKILL: no orphans) and `prlimit` (the
 * entry's memory and CPU limits).
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { StdioAddress, StdioCatalogEntry } from '../../config/stdio';
import { fillTemplate } from '../../config/stdio';

/** What to execute: the resolved command line, environment and directory. */
export interface LaunchSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string | undefined;
  /** Values never to show in logs (the credential, settable values passed in variables). */
  secrets: string[];
}

const SETPRIV = '/usr/bin/setpriv';
const PRLIMIT = '/usr/bin/prlimit';
let tools: { setpriv: boolean; prlimit: boolean } | undefined;

function available(): { setpriv: boolean; prlimit: boolean } {
  tools ??= { setpriv: existsSync(SETPRIV), prlimit: existsSync(PRLIMIT) };
  return tools;
}

/** The launch of a catalog entry with an upstream's values and credential. */
export function launchSpec(
  spec: StdioCatalogEntry,
  address: StdioAddress,
  credential: string | undefined,
  gatewayEnv: NodeJS.ProcessEnv = process.env,
): LaunchSpec {
  const env: Record<string, string> = {};
  for (const name of spec.inheritEnv) {
    const v = gatewayEnv[name];
    if (v !== undefined) env[name] = v;
  }
  Object.assign(env, spec.env);
  const secrets: string[] = [];
  for (const [name, settable] of Object.entries(spec.settable)) {
    const value = address.values[name];
    if (settable.env !== undefined && value !== undefined)
      env[settable.env] = fillTemplate(`{${name}}`, address, spec);
  }
  if (spec.credentialEnv !== undefined && credential !== undefined) {
    env[spec.credentialEnv] = credential;
    secrets.push(credential);
  }
  let args = spec.args.map((a) => fillTemplate(a, address, spec));
  let command = spec.command;
  const { memoryBytes, cpuSeconds } = spec.limits;
  const have = available();
  if (have.prlimit && (memoryBytes !== undefined || cpuSeconds !== undefined)) {
    const limits = [
      ...(memoryBytes !== undefined ? [`--as=${memoryBytes}`] : []),
      ...(cpuSeconds !== undefined ? [`--cpu=${cpuSeconds}`] : []),
    ];
    args = [...limits, '--', command, ...args];
    command = PRLIMIT;
  }
  if (have.setpriv) {
    args = ['--pdeathsig', 'KILL', '--', command, ...args];
    command = SETPRIV;
  }
  const cwd = spec.cwd !== undefined ? fillTemplate(spec.cwd, address, spec) : undefined;
  return { command, args, env, ...(cwd && { cwd }), secrets };
}

/** The upstream's credential as a process takes it: the value of its one credential header. */
export function credentialOf(headers: Record<string, string> | undefined): string | undefined {
  if (!headers) return undefined;
  const entries = Object.entries(headers);
  const auth = entries.find(([k]) => k.toLowerCase() === 'authorization');
  const [, value] = auth ?? entries[0] ?? [];
  if (value === undefined) return undefined;
  return auth ? value.replace(/^Bearer\s+/i, '') : value;
}

/** Redacts secrets and credential-looking words from a line of a process's stderr. */
export function redact(line: string, secrets: readonly string[]): string {
  let out = line;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('[redacted]');
  return out
    .replace(/(bearer\s+)[^\s"']+/gi, '$1[redacted]')
    .replace(
      /((?:api[_-]?key|token|secret|password|passwd|authorization)["']?\s*[:=]\s*["']?)[^\s"',}]+/gi,
      '$1[redacted]',
    );
}

export interface ProcessOptions {
  /** Longest stdout line (bytes): a longer one stops the process (`onOverflow`). */
  maxLineBytes: number;
  /** Bytes of stderr logged per minute; the rest is counted and said once a minute. */
  stderrBytesPerMinute: number;
  log: (line: string) => void;
  onLine: (line: Buffer) => void;
  onOverflow: () => void;
  onExit: (code: number | null, signal: NodeJS.Signals | null) => void;
}

/** Longest stderr line logged; longer ones are cut. */
const MAX_LOG_LINE = 1_000;

export class StdioProcess {
  readonly child: ChildProcessWithoutNullStreams;
  private held: Buffer[] = [];
  private heldBytes = 0;
  private exited = false;
  private stopping = false;
  private budget: { windowStart: number; used: number; dropped: number } = {
    windowStart: Date.now(),
    used: 0,
    dropped: 0,
  };
  private errTail = '';

  constructor(
    launch: LaunchSpec,
    private readonly opts: ProcessOptions,
  ) {
    this.child = spawn(launch.command, launch.args, {
      env: launch.env,
      ...(launch.cwd !== undefined && { cwd: launch.cwd }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stdout.on('data', (chunk: Buffer) => this.read(chunk));
    this.child.stderr.on('data', (chunk: Buffer) => this.logErr(chunk.toString('utf8'), launch.secrets));
    // A write to a process that has gone is reported by its exit; the pipe's own error is not news.
    this.child.stdin.on('error', () => {});
    this.child.on('error', (err) => {
      opts.log(`could not be started: ${err.message}`);
      this.markExited(null, null);
    });
    this.child.on('exit', (code, signal) => this.markExited(code, signal));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return !this.exited;
  }

  /** Alive and not being stopped: a new request may go to it (one being stopped no longer reads stdin). */
  get serving(): boolean {
    return !this.exited && !this.stopping;
  }

  /** Writes one message as a line; false when the process has gone. */
  write(message: unknown): boolean {
    if (this.exited || !this.child.stdin.writable) return false;
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
    return true;
  }

  pause(): void {
    this.child.stdout.pause();
  }

  resume(): void {
    this.child.stdout.resume();
  }

  /** Stops the process: stdin closed and SIGTERM, SIGKILL after `graceMs`; resolves once it exited. */
  async stop(graceMs = 2_000): Promise<void> {
    if (this.exited) return;
    this.stopping = true;
    const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.stdin.end();
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await gone;
    clearTimeout(timer);
  }

  /** Whether the gateway asked it to stop (an exit then is no crash). */
  get stopRequested(): boolean {
    return this.stopping;
  }

  private markExited(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exited) return;
    this.exited = true;
    this.opts.onExit(code, signal);
  }

  private read(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, nl);
      start = nl + 1;
      if (this.heldBytes + piece.length > this.opts.maxLineBytes) return this.overflow();
      const line = this.heldBytes === 0 ? piece : Buffer.concat([...this.held, piece]);
      this.held = [];
      this.heldBytes = 0;
      if (line.length > 0) this.opts.onLine(line);
    }
    const rest = chunk.subarray(start);
    if (rest.length === 0) return;
    if (this.heldBytes + rest.length > this.opts.maxLineBytes) return this.overflow();
    this.held.push(rest);
    this.heldBytes += rest.length;
  }

  private overflow(): void {
    this.held = [];
    this.heldBytes = 0;
    this.child.stdout.removeAllListeners('data');
    this.opts.onOverflow();
  }

  private logErr(text: string, secrets: readonly string[]): void {
    const lines = (this.errTail + text).split('\n');
    this.errTail = (lines.pop() ?? '').slice(0, MAX_LOG_LINE);
    const now = Date.now();
    const b = this.budget;
    if (now - b.windowStart >= 60_000) {
      if (b.dropped > 0) this.opts.log(`(${b.dropped} bytes of stderr not logged in the last minute)`);
      this.budget = { windowStart: now, used: 0, dropped: 0 };
    }
    for (const raw of lines) {
      const line = raw.length > MAX_LOG_LINE ? `${raw.slice(0, MAX_LOG_LINE)}…` : raw;
      if (line.trim() === '') continue;
      if (this.budget.used + line.length > this.opts.stderrBytesPerMinute) {
        this.budget.dropped += raw.length;
        continue;
      }
      this.budget.used += line.length;
      this.opts.log(redact(line, secrets));
    }
  }
}
