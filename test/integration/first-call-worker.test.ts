/**
 * The first call made by the worker (`tasks.firstCallFrom: worker`; docs/decisions.md, "The first call
 * from the API", point 5): once its outcome is known the claim leaves `sending` for the states the API
 * path uses (`done` for a synchronous answer, an error or a failed call; `started` for a task, once it is
 * recorded), so the sweep for lost claims never sees it: nothing is declared lost, no task failed.
 */
import type { Kysely } from 'kysely';
import pino from 'pino';
import { Cipher } from '../../src/store/cipher';
import { openDatabase } from '../../src/store/database';
import { FirstCalls } from '../../src/store/tasks/first-calls';
import { PayloadStore } from '../../src/store/tasks/payload-store';
import type { Database } from '../../src/store/schema';
import { taskKeyOf, TaskStore } from '../../src/store/tasks/task-store';
import { CreationReconciler } from '../../src/temporal/creation-reconciler';
import { firstCallsLost } from '../../src/telemetry/metrics';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { TASKS_CAPS } from '../helpers/mcp-client';

let gw: TestGateway;
let db: Kysely<Database>;

beforeAll(async () => {
  gw = await startTestGateway({
    config: {
      tasks: {
        firstCallFrom: 'worker',
        minPollIntervalMs: 50,
        maxPollIntervalMs: 2000,
        maxWatchMs: 60_000,
        pollFailureBudget: 5,
        // The gateway's own sweep leaves the claims of this test alone; the test runs one itself.
        firstCallLostAfterMs: 3_600_000,
      },
    } as never,
  });
  db = await openDatabase(gw.config.store);
}, 120_000);

afterAll(async () => {
  await db?.destroy();
  await gw?.close();
});

/** Runs `call` and returns the task key of the one first-call claim it made. */
async function claimOf(call: () => Promise<unknown>): Promise<string> {
  const keys = async () =>
    (await db.selectFrom('first_calls').select('task_key').execute()).map((r) => r.task_key);
  const before = new Set(await keys());
  await call();
  const made = (await keys()).filter((k) => !before.has(k));
  expect(made).toHaveLength(1);
  return String(made[0]);
}

async function counter(c: typeof firstCallsLost): Promise<number> {
  return (await c.get()).values[0]?.value ?? 0;
}

test('every worker-path claim is settled once its outcome is known; the lost-claims sweep sees none', async () => {
  const claims = new FirstCalls(db);
  // A synchronous answer.
  const sync = await claimOf(async () => {
    const reply = await gw.client.callTool('greet', { name: 'Ada' }, { capabilities: TASKS_CAPS });
    expect(reply.body.result).toMatchObject({ content: [{ type: 'text', text: 'Hello, Ada!' }] });
  });
  // The upstream's JSON-RPC error.
  const error = await claimOf(async () => {
    const reply = await gw.client.callTool(
      'refuse_request',
      { kind: 'capability', capability: 'sampling' },
      { capabilities: TASKS_CAPS },
    );
    expect(reply.body.error).toMatchObject({ code: -32021 });
  });
  // A task: its claim is settled when the task is recorded, before the client has its handle.
  let taskId = '';
  const task = await claimOf(async () => {
    const reply = await gw.client.callTool('slow_compute', { seconds: 1 }, { capabilities: TASKS_CAPS });
    expect(reply.body.result).toMatchObject({ resultType: 'task' });
    taskId = String(reply.body.result?.taskId);
  });
  expect(task).toBe(taskKeyOf(taskId));
  // A call that failed (the upstream dropped it unanswered): no answer to record, yet the outcome is known.
  gw.upstream.setOffline(true);
  const failed = await claimOf(async () => {
    const reply = await gw.client.callTool('greet', { name: 'Bob' }, { capabilities: TASKS_CAPS });
    expect(JSON.stringify(reply.body)).not.toContain('Hello, Bob!');
  }).finally(() => gw.upstream.setOffline(false));

  expect(await claims.stateOf(sync)).toBe('done');
  expect(await claims.stateOf(error)).toBe('done');
  expect(await claims.stateOf(task)).toBe('started');
  expect(await claims.stateOf(failed)).toBe('done');
  const mine = [sync, error, task, failed];
  // The sweep looks for claims still `sending`: an hour from now it finds none of these.
  const hourAhead = new Date(Date.now() + 3_600_000).toISOString();
  const sending = await claims.inStateSince('sending', hourAhead, 1000);
  expect(sending.filter((k) => mine.includes(k))).toEqual([]);

  // A sweep run as if every claim were stale declares nothing lost and fails no task.
  const lostBefore = await counter(firstCallsLost);
  const cipher = new Cipher(gw.config.encryption);
  const reconciler = new CreationReconciler({
    firstCalls: claims,
    payloads: new PayloadStore(db, cipher),
    store: new TaskStore(db, cipher),
    startCreated: async () => 'started',
    logger: pino({ level: 'silent' }),
    everyMs: 60_000,
    lostAfterMs: 1,
    graceMs: 1,
  });
  expect(await reconciler.runOnce(Date.now() + 3_600_000)).toEqual({ started: 0, lost: 0 });
  expect(await counter(firstCallsLost)).toBe(lostBefore);
  for (const [key, state] of [
    [sync, 'done'],
    [error, 'done'],
    [task, 'started'],
    [failed, 'done'],
  ] as const) {
    expect(await claims.stateOf(key)).toBe(state);
  }
  // The task runs on, as it would have without the sweep.
  expect((await gw.client.waitForTask(taskId, undefined, 30_000)).status).toBe('completed');
}, 120_000);
