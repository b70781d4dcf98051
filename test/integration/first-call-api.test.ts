/**
 * The first call made by the API (`tasks.firstCallFrom: api`, the default; docs/decisions.md, "The first
 * call from the API"): a synchronous answer or an error is relayed without any workflow; an upstream task
 * is recorded, then its workflow started, and its handle works at once; the creation reconciler starts a
 * recorded task whose workflow the API never started, and declares a first call lost when its sender
 * stopped before recording the answer (the task, if any, fails; the call is never sent again).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import { Cipher } from '../../src/store/cipher';
import { openDatabase } from '../../src/store/database';
import { FirstCalls } from '../../src/store/tasks/first-calls';
import { PayloadStore } from '../../src/store/tasks/payload-store';
import type { Database } from '../../src/store/schema';
import { taskKeyOf, TaskStore } from '../../src/store/tasks/task-store';
import { firstCallTestHooks } from '../../src/temporal/first-call';
import { firstCallsLost, taskStartsReconciled } from '../../src/telemetry/metrics';
import type { TaskWorkflowResult } from '../../src/workflows/messages';
import { taskWorkflowId } from '../../src/workflows/messages';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { TASKS_CAPS } from '../helpers/mcp-client';

let gw: TestGateway;
let db: Kysely<Database>;
let cipher: Cipher;

beforeAll(async () => {
  gw = await startTestGateway({
    config: {
      tasks: {
        minPollIntervalMs: 50,
        maxPollIntervalMs: 2000,
        maxWatchMs: 60_000,
        pollFailureBudget: 5,
        // The reconciler leaves a recorded task to the API's own start this long.
        startTimeoutMs: 2_000,
        reconcileEveryMs: 200,
        firstCallLostAfterMs: 60_000,
      },
    } as never,
  });
  db = await openDatabase(gw.config.store);
  cipher = new Cipher(gw.config.encryption);
}, 120_000);

afterAll(async () => {
  firstCallTestHooks.afterRecord = undefined;
  await db?.destroy();
  await gw?.close();
});

/** Every task workflow started on this gateway's task queue (visibility catches up within seconds). */
async function workflowIds(): Promise<string[]> {
  const client = await gw.temporalClient();
  const ids: string[] = [];
  for await (const w of client.workflow.list({ query: `TaskQueue = "${gw.config.temporal.taskQueue}"` })) {
    ids.push(w.workflowId);
  }
  return ids.sort();
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

async function counter(c: typeof taskStartsReconciled): Promise<number> {
  return (await c.get()).values[0]?.value ?? 0;
}

test('a synchronous answer and an error are relayed without a workflow; a task gets a handle that works at once', async () => {
  const claimsBefore = await db.selectFrom('first_calls').select('task_key').execute();
  const sync = await gw.client.callTool('greet', { name: 'Ada' }, { capabilities: TASKS_CAPS });
  expect(sync.body.result).toMatchObject({ content: [{ type: 'text', text: 'Hello, Ada!' }] });
  expect(sync.body.result).not.toHaveProperty('taskId');
  // The upstream's error is the client's error, as on the ordinary path.
  const refused = await gw.client.callTool(
    'refuse_request',
    { kind: 'capability' },
    { capabilities: TASKS_CAPS },
  );
  expect(refused.body.error).toMatchObject({
    code: -32021,
    data: { requiredCapabilities: { sampling: {} } },
  });
  // Both calls were claimed before they were sent, and the claims are settled.
  const claims = await db
    .selectFrom('first_calls')
    .select(['task_key', 'state'])
    .where('task_key', 'not in', ['', ...claimsBefore.map((c) => c.task_key)])
    .execute();
  expect(claims.map((c) => c.state)).toEqual(['done', 'done']);
  // No task record for either.
  for (const c of claims) expect(await gw.runtime().store.getTask(c.task_key)).toBeUndefined();

  const created = await gw.client.callTool('slow_compute', { seconds: 1 }, { capabilities: TASKS_CAPS });
  const taskId = String(created.body.result?.['taskId']);
  expect(created.body.result).toMatchObject({ resultType: 'task', status: 'working' });
  // The handle works the moment the client has it.
  const got = await gw.client.getTask(taskId);
  expect(got.body.result).toMatchObject({ taskId, status: 'working' });
  const done = await gw.client.waitForTask(taskId);
  expect(done).toMatchObject({ status: 'completed' });
  const key = taskKeyOf(taskId);
  expect(await new FirstCalls(db).stateOf(key)).toBe('started');
  // The task's workflow, and only it: the synchronous call and the error never became workflows.
  const ids = await until('the task workflow in visibility', async () => {
    const listed = await workflowIds();
    return listed.length > 0 ? listed : undefined;
  });
  expect(ids).toEqual([taskWorkflowId(key)]);
  const handle = (await gw.temporalClient()).workflow.getHandle(taskWorkflowId(key));
  expect(await handle.result()).toEqual<TaskWorkflowResult>({ outcome: 'task', status: 'completed' });
}, 120_000);

test('the reconciler starts a task recorded by an API that stopped before starting its workflow', async () => {
  const before = await counter(taskStartsReconciled);
  let recordedKey: string | undefined;
  firstCallTestHooks.afterRecord = async (taskKey) => {
    recordedKey = taskKey;
    throw new Error('the API process stops here');
  };
  try {
    const reply = await gw.client.callTool('slow_compute', { seconds: 1 }, { capabilities: TASKS_CAPS });
    expect(reply.body.error).toBeDefined();
  } finally {
    firstCallTestHooks.afterRecord = undefined;
  }
  const key = recordedKey as string;
  expect(key).toBeDefined();
  // Recorded (the task row and the claim) with no workflow yet.
  expect(await new FirstCalls(db).stateOf(key)).toBe('recorded');
  expect((await gw.runtime().store.getTask(key))?.snapshot.status).toBe('working');
  // The reconciler starts it; the task then runs to its end as any other.
  await until('the reconciler to start the task', async () =>
    (await new FirstCalls(db).stateOf(key)) === 'started' ? true : undefined,
  );
  const handle = (await gw.temporalClient()).workflow.getHandle(taskWorkflowId(key));
  expect(await handle.result()).toEqual<TaskWorkflowResult>({ outcome: 'task', status: 'completed' });
  expect((await gw.runtime().store.getTask(key))?.snapshot.status).toBe('completed');
  expect(await counter(taskStartsReconciled)).toBe(before + 1);
  // Each upstream task was created once: the reconciler does not send the call.
  expect(gw.upstream.stats.toolCalls['slow_compute']).toBe(2);
}, 120_000);

test('a first call claimed as sending past firstCallLostAfterMs with no answer is declared lost; its task fails', async () => {
  const before = await counter(firstCallsLost);
  const longAgo = () => new Date(Date.now() - 10 * 60_000 - 60_000);
  const oldClaims = new FirstCalls(db, longAgo);
  const store = new TaskStore(db, cipher);
  // A claim whose sender died before the answer (with a task row, as if recorded some other way).
  const lostKey = 'a1'.repeat(32);
  await store.insertTask({
    taskKey: lostKey,
    workflowId: taskWorkflowId(lostKey),
    project: 'p',
    caller: { kind: 'anonymous', id: 'anonymous' },
    upstream: 'example',
    tool: 'slow_compute',
    authorizationId: null,
    snapshot: {
      status: 'working',
      createdAt: longAgo().toISOString(),
      lastUpdatedAt: longAgo().toISOString(),
      ttlMs: null,
    },
  });
  expect(await oldClaims.claim(lostKey, 'sending')).toEqual({ won: true, state: 'sending' });
  // A worker-path claim whose answer was recorded but which its activity could not settle: done, not lost.
  const answeredKey = 'b2'.repeat(32);
  expect(await oldClaims.claim(answeredKey, 'sending')).toEqual({ won: true, state: 'sending' });
  await new PayloadStore(db, cipher).put(answeredKey, 'result', { content: [] });
  // A recent `sending` claim is left alone (its call may still be on its way).
  const recentKey = 'c3'.repeat(32);
  expect(await new FirstCalls(db).claim(recentKey, 'sending')).toEqual({ won: true, state: 'sending' });

  const claims = new FirstCalls(db);
  await until('the stale claims to be settled', async () =>
    (await claims.stateOf(lostKey)) === 'lost' && (await claims.stateOf(answeredKey)) === 'done'
      ? true
      : undefined,
  );
  expect(await claims.stateOf(recentKey)).toBe('sending');
  expect(await counter(firstCallsLost)).toBe(before + 1);
  const task = await gw.runtime().store.getTask(lostKey);
  expect(task?.snapshot).toMatchObject({
    status: 'failed',
    error: { code: -32603, message: expect.stringMatching(/answer was lost; it was not repeated/) },
  });
  // Never sent again: a lost claim cannot be claimed for sending, whatever the tool.
  expect(await claims.claim(lostKey, 'sending')).toEqual({ won: false, state: 'lost' });
}, 60_000);
