/**
 * `@modelcontextprotocol/server-everything` (the reference 2025-era server: SDK 1.x, stateful, with
 * 2025-11-25 tasks) as a child process on a free port, for tests that put it behind the gateway.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { findRepoRoot } from '../../src/config/paths';
import { getFreePort, OutputTail } from '../../src/tooling/processes';

export interface ServerEverything {
  url: string;
  port: number;
  /** Stops the process (its sessions and tasks die with it). */
  stop(): Promise<void>;
}

const ENTRY = 'node_modules/@modelcontextprotocol/server-everything/dist/index.js';
const READY = /listening on port/i;

/** Starts server-everything in streamable HTTP mode (on `port`, else a free one) and waits until it listens. */
export async function startServerEverything(
  opts: { port?: number; timeoutMs?: number } = {},
): Promise<ServerEverything> {
  const root = findRepoRoot(__dirname);
  const port = opts.port ?? (await getFreePort());
  const timeoutMs = opts.timeoutMs ?? 20_000;
  const child: ChildProcess = spawn(process.execPath, [path.join(root, ENTRY), 'streamableHttp'], {
    cwd: root,
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = new OutputTail();
  let ready = false;
  const onData = (chunk: Buffer) => {
    output.append(chunk);
    if (READY.test(output.tail(5))) ready = true;
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + timeoutMs;
  while (!ready) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server-everything did not start on port ${port}:\n${output.tail()}`);
    }
    await sleep(50);
  }
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const killed = await Promise.race([exited.then(() => true), sleep(5_000).then(() => false)]);
      if (!killed) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}
