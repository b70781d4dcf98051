/**
 * Hosted calls under `kill -9` (issue 24 item 4): the gateway runs as a real child process (`serve.ts
 * all`) and is killed with SIGKILL while a hosted call runs at the upstream. The upstream's own call log
 * says what happened after a fresh process took over: a call that may not be repeated reached it once
 * and its task failed saying why; a repeatable one reached it again and its answer completed the task;
 * and one on a server that keeps its streams (an SDK 1.x event store) was taken up where the lost worker
 * left it: sent once, its answer completed the task.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ExampleUpstream } from '../../examples/upstream/server';
import type { Sdk1Upstream } from '../fixtures/sdk1-upstream';
import { startSdk1Upstream } from '../fixtures/sdk1-upstream';
import { getFreePort } from '../../src/tooling/processes';
import { McpTestClient } from '../helpers/mcp-client';
import {
  anonymousProject,
  killChildren,
  killProcess,
  startServeProcess,
  waitFor,
  writeServeConfig,
} from '../helpers/serve-process';
import { startLabelCountingUpstream } from '../helpers/label-calls';
import { testStoreConfig } from '../helpers/store';

let dir: string;
let upstream: ExampleUpstream;
/** An SDK 1.x server that keeps its streams' events (an event store): its answers can be resumed. */
let resumable: Sdk1Upstream;
let configFile: string;
let port: number;
const children: ChildProcess[] = [];
/** The upstream's call log: tools/call requests per `label` argument. */
let calls: Map<string, number>;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-hosted-kill-'));
  ({ upstream, calls } = await startLabelCountingUpstream());
  resumable = await startSdk1Upstream('stateful', 0, { eventStore: true });
  port = await getFreePort();
  const hosted = (repeatable: string[]) => ({
    tools: ['slow_compute'],
    promoteAfterMs: 0,
    repeatable,
  });
  configFile = writeServeConfig(dir, {
    port,
    upstreamUrl: upstream.url,
    store: await testStoreConfig(dir),
    tasks: { startTimeoutMs: 60_000 },
    projects: [
      anonymousProject('once', { alias: 'example', url: upstream.url, hosting: hosted(['!slow_compute']) }),
      anonymousProject('again', { alias: 'example', url: upstream.url, hosting: hosted(['slow_compute']) }),
      {
        slug: 'resume',
        authMode: 'anonymous',
        namespacing: false,
        upstreams: [
          {
            alias: 'sdk1',
            url: resumable.url,
            hosting: { tools: ['wait'], promoteAfterMs: 0, repeatable: ['!wait'] },
          },
        ],
      },
    ],
  });
});

afterAll(async () => {
  await killChildren(children);
  await upstream?.close();
  await resumable?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Starts a hosted call of `seconds`, kills the gateway once the upstream has it, starts a new one. */
async function killMidCall(slug: string, label: string): Promise<{ client: McpTestClient; taskId: string }> {
  const client = new McpTestClient(`http://127.0.0.1:${port}/v1/mcp/${slug}`);
  const gateway = await startServeProcess(configFile, port, children);
  const created = await client.callTool('slow_compute', { seconds: 8, label });
  expect(created.body).toMatchObject({ result: { resultType: 'task' } });
  await waitFor(
    () => (calls.get(label) ?? 0) > 0,
    () => `the upstream never got ${label}`,
  );
  await killProcess(gateway);
  await startServeProcess(configFile, port, children);
  return { client, taskId: String(created.body.result?.taskId) };
}

test('a call that may not be repeated: sent once, the task fails saying it was not repeated', async () => {
  const { client, taskId } = await killMidCall('once', 'once-1');
  const done = await client.waitForTask(taskId, undefined, 90_000);
  expect(done.status).toBe('failed');
  expect(JSON.stringify(done)).toMatch(/interrupted after it was sent.*not repeated/);
  expect(calls.get('once-1')).toBe(1);
  await killChildren(children.splice(0));
}, 180_000);

test('a repeatable call: sent again after the kill, and its answer completes the task', async () => {
  const { client, taskId } = await killMidCall('again', 'again-1');
  const done = await client.waitForTask(taskId, undefined, 90_000);
  expect(done.status).toBe('completed');
  expect(JSON.stringify(done.result)).toContain('again-1');
  expect(calls.get('again-1')).toBe(2);
  await killChildren(children.splice(0));
}, 180_000);

test('a call on a resumable stream: taken up after the kill, sent once, its answer completes the task', async () => {
  const client = new McpTestClient(`http://127.0.0.1:${port}/v1/mcp/resume`);
  const gateway = await startServeProcess(configFile, port, children);
  const created = await client.callTool('wait', { seconds: 8 });
  expect(created.body).toMatchObject({ result: { resultType: 'task' } });
  const taskId = String(created.body.result?.taskId);
  await waitFor(
    () => resumable.stats.calls > 0,
    () => 'the upstream never got the call',
  );
  // A resume point is stored (at most once a second) before the process dies.
  await new Promise((r) => setTimeout(r, 1500));
  await killProcess(gateway);
  await startServeProcess(configFile, port, children);
  const done = await client.waitForTask(taskId, undefined, 90_000);
  expect(done.status).toBe('completed');
  expect(JSON.stringify(done.result)).toContain('waited 8 s');
  expect(resumable.stats.calls).toBe(1);
  await killChildren(children.splice(0));
}, 180_000);
