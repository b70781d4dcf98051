/**
 * The watch hub survives SIGKILL (issue 23: "no poll lost when a worker dies; another takes the watch
 * within seconds"): the gateway runs as a real child process (`serve.ts all`, `tasks.watchBy: hub`), is
 * killed while its hub holds the leases of tasks in flight, and a fresh process's hub takes them once
 * the dead one's leases run out: every task completes with its own result, each upstream call made
 * once, and no hub row is left behind. (test/integration/watch-hub.test.ts takes a hub over in process.)
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { ExampleUpstream } from '../../examples/upstream/server';
import { startExampleUpstream } from '../../examples/upstream/server';
import { openDatabase } from '../../src/store/database';
import type { Database } from '../../src/store/schema';
import { getFreePort } from '../../src/tooling/processes';
import { McpTestClient } from '../helpers/mcp-client';
import { killChildren, killProcess, startServeProcess, writeServeConfig } from '../helpers/serve-process';
import { testStoreConfig } from '../helpers/store';

let dir: string;
let upstream: ExampleUpstream;
let configFile: string;
let port: number;
let store: Record<string, unknown>;
const children: ChildProcess[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-hub-kill-'));
  upstream = await startExampleUpstream({ pollIntervalMs: 200 });
  port = await getFreePort();
  store = await testStoreConfig(dir);
  configFile = writeServeConfig(dir, {
    port,
    upstreamUrl: upstream.url,
    store,
    // A loaded machine can take the fresh worker past the 10 s default to its first workflow task.
    tasks: { startTimeoutMs: 60_000, watchBy: 'hub', hub: { leaseMs: 3_000, claimEveryMs: 200 } },
  });
});

afterAll(async () => {
  await killChildren(children);
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('tasks watched by a killed process hub are taken over by the next one and complete', async () => {
  const client = new McpTestClient(`http://127.0.0.1:${port}/v1/mcp/demo`);
  const first = await startServeProcess(configFile, port, children);
  const labels = ['hub-a', 'hub-b', 'hub-c'];
  const taskIds: string[] = [];
  for (const label of labels) {
    const created = await client.callTool('slow_compute', { seconds: 5, label });
    expect(created.body).toMatchObject({ result: { resultType: 'task' } });
    taskIds.push(String(created.body.result?.taskId));
  }
  const db: Kysely<Database> = await openDatabase(store as never);
  try {
    // The first process's hub holds every task before it dies (its leases are what must run out).
    for (let i = 0; ; i++) {
      const held = await db.selectFrom('watch_hub').select('lease_owner').execute();
      if (held.length === labels.length && held.every((r) => r.lease_owner !== null)) break;
      if (i > 200) throw new Error(`the hub never held every task: ${JSON.stringify(held)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await killProcess(first);

    await startServeProcess(configFile, port, children);
    for (const [i, taskId] of taskIds.entries()) {
      const done = await client.waitForTask(taskId, undefined, 90_000);
      expect(done).toMatchObject({ status: 'completed', taskId });
      expect(JSON.stringify(done.result)).toContain(labels[i] as string);
    }
    // Each side effect once: the restart took the watches over, it did not re-send a call.
    expect(upstream.stats.toolCalls['slow_compute']).toBe(labels.length);
    // Nothing left for a hub to poll: each ended task's row went with it.
    for (let i = 0; ; i++) {
      const left = await db.selectFrom('watch_hub').select('task_key').execute();
      if (left.length === 0) break;
      if (i > 100) throw new Error(`hub rows left behind: ${left.length}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await db.destroy();
  }
}, 180_000);
