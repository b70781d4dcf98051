/**
 * "Survive anything": the gateway runs as a real child process (`serve.ts all`), is killed with SIGKILL
 * while a task is in flight, and a fresh process finishes and serves the task; and a worker process
 * killed at exact points of a task's first call.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ExampleUpstream } from '../../examples/upstream/server';
import { startExampleUpstream } from '../../examples/upstream/server';
import type { Kysely } from 'kysely';
import { openDatabase } from '../../src/store/database';
import type { Database } from '../../src/store/schema';
import { taskKeyOf } from '../../src/store/tasks/task-store';
import { getFreePort } from '../../src/tooling/processes';
import { McpTestClient, TASKS_AND_FORM_CAPS } from '../helpers/mcp-client';
import { killChildren, killProcess, startServeProcess, writeServeConfig } from '../helpers/serve-process';
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
  configFile = writeServeConfig(dir, {
    port,
    upstreamUrl: upstream.url,
    store: await testStoreConfig(dir),
    // A loaded machine (2 shared cores) can take the fresh worker past the 10 s default to its first
    // workflow task; the start deadline is not what this test is about.
    tasks: { startTimeoutMs: 60_000 },
  });
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

  await killProcess(first);
  // Nothing answers for the project while no gateway process runs.
  await expect(client.getTask(taskId)).rejects.toThrow();

  await startGatewayProcess();
  const done = await client.waitForTask(taskId, undefined, 60_000);
  expect(done).toMatchObject({ status: 'completed', taskId });
  expect(JSON.stringify(done.result)).toContain('phoenix');
  // The side effect happened once: the restart did not re-send the tools/call.
  expect(upstream.stats.toolCalls['slow_compute']).toBe(1);
}, 120_000);

/**
 * Issue 23's durability defect, kept as a test through any redesign: a worker that dies inside a task's
 * first workflow task, after the first `tools/call` was sent (test/fixtures/crash-point.ts kills it at
 * the exact step), leaves the next attempt to run the first call again. That attempt must never send
 * the call twice, and must end where the task truly is: in the store, on `tasks/get` and in the
 * client's answer. The API and the worker are separate processes, as in production; only the worker
 * dies.
 */
describe("a worker killed inside a task's first workflow task", () => {
  let crashDir: string;
  let apiPort: number;
  let healthPort: number;
  /** The workers' configuration, with their health port (the API's is the same without it). */
  let crashConfig: string;
  let store: Awaited<ReturnType<typeof testStoreConfig>>;
  let db: Kysely<Database>;
  let client: McpTestClient;
  const workers: ChildProcess[] = [];

  beforeAll(async () => {
    crashDir = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-first-call-crash-'));
    [apiPort, healthPort] = [await getFreePort(), await getFreePort()];
    store = await testStoreConfig(crashDir);
    crashConfig = writeServeConfig(crashDir, {
      port: apiPort,
      upstreamUrl: upstream.url,
      store,
      sections: { health: { port: healthPort } },
      // The dying worker must take each task before the API gives up on it, however loaded the machine.
      // The worker path: there the first call runs inside the task's first workflow task (the API path
      // makes it in the API process; test/integration/first-call-api.test.ts).
      tasks: { startTimeoutMs: 60_000, firstCallFrom: 'worker' },
    });
    const { health: _health, ...apiSections } = JSON.parse(readFileSync(crashConfig, 'utf8')) as Record<
      string,
      unknown
    >;
    const apiConfig = path.join(crashDir, 'api.json');
    writeFileSync(apiConfig, JSON.stringify(apiSections));
    await startServeProcess(apiConfig, apiPort, children, 'warn', {}, { role: 'api' });
    db = await openDatabase(store);
    client = new McpTestClient(`http://127.0.0.1:${apiPort}/v1/mcp/demo`);
  }, 120_000);

  afterAll(async () => {
    await killChildren(workers);
    await db?.destroy();
    rmSync(crashDir, { recursive: true, force: true });
  });

  afterEach(async () => {
    // The next test's crashing worker must be the only one polling.
    for (const w of workers) {
      if (w.exitCode !== null || w.signalCode !== null) continue;
      const exited = once(w, 'exit');
      w.kill('SIGTERM');
      await exited;
    }
  });

  /**
   * Starts a worker that kills itself at `step`, runs `start` (which makes the task's first call), and
   * resolves once the worker is dead, having crashed exactly there, with the call's pending answer.
   */
  async function crashWhile<T>(step: string, start: () => Promise<T>): Promise<{ answer: Promise<T> }> {
    const worker = await startServeProcess(
      crashConfig,
      healthPort,
      workers,
      'warn',
      { TASKROUTER_TEST_CRASH_AT: step },
      { role: 'worker', imports: ['test/fixtures/crash-point.mjs'] },
    );
    let stderr = '';
    worker.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = once(worker, 'exit');
    const answer = start();
    // Settled later; a rejection is the test's to see.
    answer.catch(() => {});
    const [, signal] = (await exited) as [number | null, NodeJS.Signals | null];
    // With its stderr, so that a worker that died otherwise says why.
    expect({ signal, stderr }).toEqual({
      signal: 'SIGKILL',
      stderr: expect.stringContaining(`crash-point: SIGKILL after ${step}`),
    });
    return { answer };
  }

  /** A worker without the crash point: it takes up the workflow task the dead one left. */
  function freshWorker(): Promise<ChildProcess> {
    return startServeProcess(crashConfig, healthPort, workers, 'warn', {}, { role: 'worker' });
  }

  /** The call's answer once a fresh worker has taken over from the one that crashed at `step`. */
  async function answerAfterCrash<T>(step: string, start: () => Promise<T>): Promise<T> {
    const { answer } = await crashWhile(step, start);
    await freshWorker();
    return answer;
  }

  /** The statuses a task's events recorded, oldest first. */
  async function statusEvents(taskKey: string) {
    const events = await db
      .selectFrom('task_events')
      .select('status')
      .where('task_key', '=', taskKey)
      .where('kind', '=', 'status')
      .orderBy('id')
      .execute();
    return events.map((e) => e.status);
  }

  async function storedTask(taskId: string) {
    const taskKey = taskKeyOf(taskId);
    const row = await db
      .selectFrom('tasks')
      .select('status')
      .where('task_key', '=', taskKey)
      .executeTakeFirst();
    return { status: row?.status, events: await statusEvents(taskKey) };
  }

  const calls = (tool: string) => upstream.stats.toolCalls[tool] ?? 0;

  test('the upstream task finished meanwhile: it ends completed in the store and on tasks/get, called once', async () => {
    const before = calls('slow_compute');
    const { answer } = await crashWhile('task-recorded', () =>
      client.callTool('slow_compute', { seconds: 0, label: 'lazarus' }),
    );
    // The scenario as intended: the dead worker had sent the call and recorded the task `working`, and
    // the upstream task is done before any worker looks again.
    const upstreamTaskId = String(upstream.stats.taskIds.at(-1));
    const direct = await new McpTestClient(upstream.url).getTask(upstreamTaskId);
    expect(direct.body.result).toMatchObject({ status: 'completed' });
    expect(await db.selectFrom('tasks').select('status').execute()).toEqual([{ status: 'working' }]);

    await freshWorker();
    const created = await answer;
    expect(created.body).toMatchObject({ result: { resultType: 'task' } });
    const taskId = String(created.body.result?.taskId);
    const done = await client.waitForTask(taskId, undefined, 60_000);
    expect(done).toMatchObject({ status: 'completed', taskId });
    expect(JSON.stringify(done.result)).toContain('lazarus');
    expect(await storedTask(taskId)).toEqual({ status: 'completed', events: ['working', 'completed'] });
    expect(calls('slow_compute') - before).toBe(1);
  }, 180_000);

  test('the upstream task still runs: the next attempt goes on watching it (input asked and answered)', async () => {
    const before = calls('confirm_delete');
    const created = await answerAfterCrash('task-recorded', () =>
      client.callTool('confirm_delete', { filename: 'phoenix.txt' }, { capabilities: TASKS_AND_FORM_CAPS }),
    );
    const taskId = String(created.body.result?.taskId);
    const asking = await client.waitForTask(taskId, (s) => s === 'input_required', 60_000);
    const [key] = Object.keys(asking.inputRequests as Record<string, unknown>);
    const ack = await client.request(
      'tasks/update',
      { taskId, inputResponses: { [String(key)]: { action: 'accept', content: { confirm: true } } } },
      { capabilities: TASKS_AND_FORM_CAPS },
    );
    expect(ack.body.result).toMatchObject({ resultType: 'complete' });
    const done = await client.waitForTask(taskId, undefined, 60_000);
    expect(JSON.stringify(done.result)).toContain('deleted phoenix.txt');
    expect((await storedTask(taskId)).status).toBe('completed');
    expect(calls('confirm_delete') - before).toBe(1);
  }, 180_000);

  test('a synchronous answer, recorded before the crash, is the answer the client gets, called once', async () => {
    const before = calls('greet');
    const reply = await answerAfterCrash('answer-recorded', () =>
      client.callTool('greet', { name: 'Orpheus' }),
    );
    expect(reply.body.result).toMatchObject({ resultType: 'complete' });
    expect(JSON.stringify(reply.body.result?.content)).toContain('Hello, Orpheus!');
    expect(calls('greet') - before).toBe(1);
  }, 180_000);

  test('a 2025-11-25 task answered synchronously before the crash: completed in the store and for the client', async () => {
    const before = calls('greet');
    const legacy = await legacySession(`http://127.0.0.1:${apiPort}/v1/mcp/demo`);
    const created = await answerAfterCrash('task-recorded', () =>
      legacy.request('tools/call', { name: 'greet', arguments: { name: 'Eurydice' }, task: { ttl: 60_000 } }),
    );
    const task = (created.result as { task: { taskId: string; status: string } }).task;
    expect(task.status).toBe('completed');
    const result = await legacy.request('tasks/result', { taskId: task.taskId });
    expect(JSON.stringify(result.result)).toContain('Hello, Eurydice!');
    expect(await storedTask(task.taskId)).toEqual({ status: 'completed', events: ['completed'] });
    expect(calls('greet') - before).toBe(1);
  }, 180_000);

  test('a task recorded by the dead attempt whose answer cannot be found: failed in the store too', async () => {
    const before = calls('slow_compute');
    const { answer } = await crashWhile('task-recorded', () =>
      client.callTool('slow_compute', { seconds: 0, label: 'orphan' }),
    );
    // What the next attempt would find after the payload retention, or from a worker before the answers
    // were recorded: the task row, and no record of the upstream's answer.
    const [row] = await db.selectFrom('tasks').select('task_key').where('status', '=', 'working').execute();
    const taskKey = String(row?.task_key);
    await db
      .deleteFrom('payloads')
      .where('task_key', '=', taskKey)
      .where('kind', '=', 'upstream_task_id')
      .execute();
    await freshWorker();
    const reply = await answer;
    expect(reply.body.error?.message).toMatch(/interrupted after it was sent/);
    expect(await statusEvents(taskKey)).toEqual(['working', 'failed']);
    expect(calls('slow_compute') - before).toBe(1);
  }, 180_000);

  test('an answer lost with the worker: a clear error, never a second call', async () => {
    const before = calls('greet');
    const reply = await answerAfterCrash('answer-received', () =>
      client.callTool('greet', { name: 'Icarus' }),
    );
    expect(reply.body.error?.message).toMatch(
      /interrupted after it was sent.*not repeated because the tool is not idempotent/,
    );
    expect(calls('greet') - before).toBe(1);
  }, 180_000);
});

/** A 2025-11-25 session that takes tasks, by hand (JSON or one-event SSE answers). */
async function legacySession(url: string) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  let id = 0;
  const post = async (body: Record<string, unknown>, session?: string) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        ...headers,
        ...(session && { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' }),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, ...body }),
    });
    const text = await res.text();
    const data = res.headers.get('content-type')?.startsWith('text/event-stream')
      ? (text
          .split('\n')
          .filter((l) => l.startsWith('data: ') && l.length > 6)
          .at(-1)
          ?.slice(6) ?? '{}')
      : text;
    return { session: res.headers.get('mcp-session-id') ?? undefined, body: JSON.parse(data) as RpcBody };
  };
  const init = await post({
    method: 'initialize',
    params: {
      protocolVersion: '2025-11-25',
      capabilities: { tasks: { list: {}, cancel: {}, requests: {} } },
      clientInfo: { name: 'crash-test', version: '1' },
    },
  });
  const session = String(init.session);
  return {
    request: async (method: string, params: Record<string, unknown>) =>
      (await post({ method, params }, session)).body,
  };
}

interface RpcBody {
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}
