/**
 * Task creation's guarantees (issue "Speed", points 3 and 4): with no worker, creation answers within the
 * start deadline with a clear error and the upstream call is never sent, not even when a worker comes
 * up later; and the first call is claimed in the store before it is sent, so running it again (a local
 * activity after a crash) never sends it twice, and takes up the task the crashed run created.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { MockActivityEnvironment } from '@temporalio/testing';
import pino from 'pino';
import { createActivities } from '../../src/activities';
import type { CallUpstreamToolInput } from '../../src/activities/types';
import { PROTOCOL_VERSION } from '../../src/protocol';
import { openDatabase } from '../../src/store/database';
import { Cipher, generateKey } from '../../src/store/cipher';
import { FirstCalls } from '../../src/store/tasks/first-calls';
import { PayloadStore } from '../../src/store/tasks/payload-store';
import { TaskStore } from '../../src/store/tasks/task-store';
import type { UpstreamClient } from '../../src/upstream/client';
import { UpstreamTransportError } from '../../src/upstream/errors';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { TASKS_CAPS } from '../helpers/mcp-client';
import { testStoreConfig } from '../helpers/store';

/** The task activities over a fresh store (SQLite or PostgreSQL) and the given upstream client. */
async function activitiesOver(upstream: UpstreamClient) {
  const db = await openDatabase(await testStoreConfig());
  const cipher = new Cipher({ activeKeyId: 'k1', keys: { k1: generateKey() } });
  const payloads = new PayloadStore(db, cipher);
  const activities = createActivities({
    upstream,
    store: new TaskStore(db, cipher),
    payloads,
    firstCalls: new FirstCalls(db),
    resolveUpstream: async () => ({ alias: 'example', url: 'http://upstream.invalid/mcp' }),
    gatewayInfo: { name: 'taskrouter-test', version: '1.0.0' },
    settings: { minPollIntervalMs: 50, maxPollIntervalMs: 60_000, maxWatchMs: 600_000, pollFailureBudget: 3 },
    logger: pino({ level: 'silent' }),
  });
  return { db, payloads, activities };
}

describe('with no worker polling', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    // The worker path (update-with-start): the API waits for a worker to make the first call.
    gw = await startTestGateway({
      config: { tasks: { startTimeoutMs: 1500, firstCallFrom: 'worker' } } as never,
    });
    await gw.stop();
    await gw.start({ api: true, worker: false });
  });
  afterAll(async () => {
    await gw?.close();
  });

  test('creation answers within the deadline, and the call is never sent, even once a worker comes', async () => {
    const before = gw.upstream.stats.toolCalls['slow_compute'] ?? 0;
    const started = Date.now();
    const reply = await gw.client.callTool('slow_compute', { seconds: 0 }, { capabilities: TASKS_CAPS });
    expect(reply.body.error).toMatchObject({ code: -31002 });
    expect(reply.body.error?.message).toMatch(/nothing was sent/);
    expect(Date.now() - started).toBeLessThan(30_000);
    // A worker now takes the task: past its deadline, it must not send the call.
    await gw.start({ api: false, worker: true });
    await sleep(3000);
    expect(gw.upstream.stats.toolCalls['slow_compute'] ?? 0).toBe(before);
  });
});

describe('the first call is claimed before it is sent', () => {
  test('a second run of the activity for the same task does not send again: it answers as the first', async () => {
    let sent = 0;
    const upstream = {
      send: async () => {
        sent++;
        return { kind: 'result', result: { resultType: 'complete', content: [] } };
      },
    } as unknown as UpstreamClient;
    const { db, payloads, activities } = await activitiesOver(upstream);
    const taskKey = 'a'.repeat(64);
    const input: CallUpstreamToolInput = {
      project: 'p1',
      upstream: 'example',
      principal: { kind: 'anonymous' },
      authorizationId: null,
      taskKey,
      call: {
        tool: 'work',
        requestRef: await payloads.put(taskKey, 'request', { relayedMeta: {} }),
        protocolVersion: PROTOCOL_VERSION,
        elicitationForm: false,
        idempotent: false,
      },
    };
    const first = await new MockActivityEnvironment().run(activities.callUpstreamTool, input);
    expect(first).toMatchObject({ kind: 'result' });
    // A run after a crash answers with what the upstream answered the first run (recorded at once).
    expect(await new MockActivityEnvironment().run(activities.callUpstreamTool, input)).toEqual(first);
    expect(sent).toBe(1);
    // A claimed call whose answer was never recorded (lost with its worker) is not sent again.
    const lostKey = 'e'.repeat(64);
    expect(await new FirstCalls(db).claim(lostKey, 'sending')).toEqual({ won: true, state: 'sending' });
    await expect(
      new MockActivityEnvironment().run(activities.callUpstreamTool, {
        ...input,
        taskKey: lostKey,
        call: { ...input.call, requestRef: await payloads.put(lostKey, 'request', { relayedMeta: {} }) },
      }),
    ).rejects.toMatchObject({
      type: 'UpstreamCallOutcomeUnknown',
      message: expect.stringMatching(/interrupted after it was sent and its answer was lost/),
    });
    expect(sent).toBe(1);
    // An abandoned creation is never sent, and a claim the API lost tells it the call is on its way.
    const abandonedKey = 'b'.repeat(64);
    expect(await new FirstCalls(db).claim(abandonedKey, 'abandoned')).toEqual({
      won: true,
      state: 'abandoned',
    });
    await expect(
      new MockActivityEnvironment().run(activities.callUpstreamTool, {
        ...input,
        taskKey: abandonedKey,
        call: { ...input.call, requestRef: await payloads.put(abandonedKey, 'request', { relayedMeta: {} }) },
      }),
    ).rejects.toMatchObject({ type: 'TaskNotStarted' });
    expect(sent).toBe(1);
    // The answered call's claim is settled (`done`): a late API learns that the call was made.
    expect(await new FirstCalls(db).claim(taskKey, 'abandoned')).toEqual({ won: false, state: 'done' });
    await db.destroy();
  });
});

describe('a first call run again after its worker died', () => {
  const upstreamTask = {
    resultType: 'task',
    taskId: 'upstream-task-1',
    status: 'working',
    createdAt: new Date().toISOString(),
    lastUpdatedAt: new Date().toISOString(),
    ttlMs: 60_000,
    pollIntervalMs: 500,
  };

  async function setUp() {
    const sent: string[] = [];
    /** While set, the upstream is unreachable for reads (tasks/get). */
    const reads = { down: false };
    const upstream = {
      send: async (_endpoint: unknown, method: string) => {
        sent.push(method);
        if (reads.down && method === 'tasks/get') {
          throw new UpstreamTransportError('connect ECONNREFUSED', false);
        }
        return {
          kind: 'result',
          result: method === 'tools/call' ? upstreamTask : { ...upstreamTask, resultType: 'complete' },
        };
      },
    } as unknown as UpstreamClient;
    const { db, payloads, activities } = await activitiesOver(upstream);
    const input = async (taskKey: string, startDeadline: string): Promise<CallUpstreamToolInput> => ({
      project: 'p1',
      upstream: 'example',
      principal: { kind: 'anonymous' },
      authorizationId: null,
      taskKey,
      startDeadline,
      call: {
        tool: 'work',
        requestRef: await payloads.put(taskKey, 'request', { relayedMeta: {} }),
        protocolVersion: PROTOCOL_VERSION,
        elicitationForm: false,
        idempotent: false,
      },
    });
    return { db, activities, sent, input, reads };
  }

  test('past the start deadline it takes up the task the crashed run created instead of saying nothing was sent', async () => {
    const { db, activities, sent, input } = await setUp();
    const taskKey = 'c'.repeat(64);
    const inTime = await input(taskKey, new Date(Date.now() + 60_000).toISOString());
    const first = await new MockActivityEnvironment().run(activities.callUpstreamTool, inTime);
    expect(first).toMatchObject({ kind: 'task', upstreamTaskId: 'upstream-task-1' });
    // The worker died before the workflow task completed; the next one runs past the deadline.
    const late = { ...inTime, startDeadline: new Date(Date.now() - 1000).toISOString() };
    const again = await new MockActivityEnvironment().run(activities.callUpstreamTool, late);
    expect(again).toMatchObject({
      kind: 'task',
      upstreamTaskId: 'upstream-task-1',
      observation: { status: 'working' },
    });
    expect(sent.filter((m) => m === 'tools/call')).toHaveLength(1);
    // The API that gave up meanwhile learns that the call is on its way.
    expect(await new FirstCalls(db).claim(taskKey, 'abandoned')).toEqual({ won: false, state: 'sending' });
    await db.destroy();
  });

  test('a late first run claims the creation as abandoned: nothing is sent, and the API agrees', async () => {
    const { db, activities, sent, input } = await setUp();
    const taskKey = 'd'.repeat(64);
    const late = await input(taskKey, new Date(Date.now() - 1000).toISOString());
    await expect(new MockActivityEnvironment().run(activities.callUpstreamTool, late)).rejects.toMatchObject({
      type: 'TaskNotStarted',
    });
    expect(sent).toEqual([]);
    expect(await new FirstCalls(db).claim(taskKey, 'sending')).toEqual({ won: false, state: 'abandoned' });
    await db.destroy();
  });

  test('a task it cannot read at once is still taken up, as working: the watch reads it again', async () => {
    const { db, activities, sent, input, reads } = await setUp();
    const taskKey = 'f'.repeat(64);
    const call = await input(taskKey, new Date(Date.now() + 60_000).toISOString());
    await new MockActivityEnvironment().run(activities.callUpstreamTool, call);
    reads.down = true;
    const again = await new MockActivityEnvironment().run(activities.callUpstreamTool, call);
    expect(again).toMatchObject({
      kind: 'task',
      upstreamTaskId: 'upstream-task-1',
      observation: { status: 'working', detailRef: expect.any(String) },
    });
    expect(sent.filter((m) => m === 'tools/call')).toHaveLength(1);
    expect(sent).toContain('tasks/get');
    await db.destroy();
  });
});
