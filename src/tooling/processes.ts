/**
 * Process helpers the development launchers share (Temporal dev server, PostgreSQL): free ports, pid
 * liveness, stopping by pid, and keeping the tail of a child's output for error messages.
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

const OUTPUT_TAIL_BYTES = 16 * 1024;
const STOP_GRACE_MS = 5000;

/**
 * A port that is free now and that the kernel will not hand out on its own: chosen at random below the
 * ephemeral range (`ip_local_port_range`), whose ports every outgoing connection and every bind to port
 * 0 on the machine draws from. A port from inside that range is taken by some connection's local end
 * often enough, in the seconds between choosing it and binding it, to fail a busy test run
 * (EADDRINUSE). Still racy between two callers choosing the same port, so startDevServer retries on a
 * clash. Falls back to binding port 0 where the range cannot be read.
 */
export async function getFreePort(host = '127.0.0.1'): Promise<number> {
  const below = ephemeralRangeStart();
  if (below !== undefined && below > LOW_PORT_FLOOR + 1000) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = LOW_PORT_FLOOR + Math.floor(Math.random() * (below - LOW_PORT_FLOOR));
      if (await isPortFree(port, host)) return port;
    }
  }
  return bindPortZero(host);
}

/** Ports below this are left alone: well-known and registered services people run on a workstation. */
const LOW_PORT_FLOOR = 20_000;

function ephemeralRangeStart(): number | undefined {
  try {
    const first = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    );
    return Number.isInteger(first) && first > 0 && first <= 65535 ? first : undefined;
  } catch {
    return undefined;
  }
}

function bindPortZero(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen({ port: 0, host, exclusive: true }, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : undefined;
      srv.close(() => (port === undefined ? reject(new Error('could not read bound port')) : resolve(port)));
    });
  });
}

export function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** True while a process with this pid exists (signal 0 only checks for existence/permission). */
export function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM means it exists but belongs to someone else: still alive.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function waitForPidExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isPidAlive(pid)) {
    if (Date.now() >= deadline) return false;
    // Yielding to the event loop also lets Node reap the child if it is ours (else it lingers as a zombie).
    await sleep(50);
  }
  return true;
}

export function signalPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/**
 * Stops a process by pid: SIGTERM (the dev server shuts down cleanly), then SIGKILL after `graceMs`.
 * For callers that only kept the pid (e.g. jest's globalTeardown). Never signals anything but this pid.
 */
export async function stopProcessByPid(pid: number, graceMs = STOP_GRACE_MS): Promise<void> {
  if (!isPidAlive(pid)) return;
  signalPid(pid, 'SIGTERM');
  if (await waitForPidExit(pid, graceMs)) return;
  signalPid(pid, 'SIGKILL');
  if (!(await waitForPidExit(pid, graceMs))) throw new Error(`process ${pid} did not exit after SIGKILL`);
}

/** Keeps the last few KiB of a stream; also drains it, so a chatty server never blocks on a full pipe. */
export class OutputTail {
  private buf = '';
  append(chunk: Buffer | string): void {
    this.buf += chunk.toString();
    if (this.buf.length > OUTPUT_TAIL_BYTES * 2) this.buf = this.buf.slice(-OUTPUT_TAIL_BYTES);
  }
  tail(lines = 30): string {
    return this.buf.trimEnd().split('\n').slice(-lines).join('\n');
  }
}
