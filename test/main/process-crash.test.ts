/**
 * "Survive anything": the gateway runs as a real child process (`serve.ts all`), is killed with SIGKILL
 * while a task is in flight, and a fresh process finishes and serves the task.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ExampleUpstream } from '../../examples/upstream/server';
import { startExampleUpstream } from '../../examples/upstream/server';
import { getFreePort } from '../../src/tooling/processes';
import { McpTestClient } from '../helpers/mcp-client';
import { killChildren, startServeProcess, writeServeConfig } from '../helpers/serve-process';
import { testStoreConfig } from '../helpers/store';

let dir: string;
let upstream: ExampleUpstream;
let configFile: string;
let port: number;
const children: ChildProcess[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-crash-'));
  upstream = await startExampleUpstream({ pollIntervalMs: 100 });
  port = await getFreePort();
  configFile = writeServeConfig(dir, { port, upstreamUrl: upstream.url, store: await testStoreConfig(dir) });
});

afterAll(async () => {
  await killChildren(children);
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Starts `serve.ts all` and resolves once it answers HTTP. */
function startGatewayProcess(): Promise<ChildProcess> {
  return startServeProcess(configFile, port, children);
}

test('a task survives SIGKILL of the gateway process', async () => {
  const client = new McpTestClient(`http://127.0.0.1:${port}/v1/mcp/demo`);
  const first = await startGatewayProcess();
  const created = await client.callTool('slow_compute', { seconds: 3, label: 'phoenix' });
  // The whole body, so that a failure shows the error the gateway answered.
  expect(created.body).toMatchObject({ result: { resultType: 'task' } });
  const taskId = String(created.body.result?.taskId);

  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));
  // Nothing answers for the project while no gateway process runs.
  await expect(client.getTask(taskId)).rejects.toThrow();

  await startGatewayProcess();
  const done = await client.waitForTask(taskId, undefined, 60_000);
  expect(done).toMatchObject({ status: 'completed', taskId });
  expect(JSON.stringify(done.result)).toContain('phoenix');
  // The side effect happened once: the restart did not re-send the tools/call.
  expect(upstream.stats.toolCalls['slow_compute']).toBe(1);
}, 120_000);
