/**
 * Tasks watched by the watch hub (`tasks.watchBy: hub`; issue 23 item 1, docs/decisions.md, "The watch
 * hub"), end to end on the shared Temporal dev server and the database under test: tasks complete, ask
 * for input and take it, and cancel as with watch activities; a task's history does not grow with its
 * polls; a hub that dies without releasing its tasks is replaced by another worker's hub after the lease;
 * a row whose workflow is gone is dropped, the completion its poll saw recorded for the client all the
 * same (the poll that sees an upstream task complete or fail records it at once and says so; the workflow
 * records it no more); and a workflow that hears nothing enlists again (continuing as new when
 * its history grows) and still completes. With `tasks.hub.adoptApiEnlistment`, a workflow started before
 * the API's row falls due adopts it (even when its first workflow task runs later), one started later
 * (by the creation reconciler) enlists the task itself, and a reset of an adopted workflow replays.
 */
import { randomUUID } from 'node:crypto';
import { tsToMs } from '@temporalio/common/lib/time';
import type { Kysely } from 'kysely';
import pino from 'pino';
import type { Runtime } from '../../src/main/runtime';
import { startRuntime } from '../../src/main/runtime';
import { openDatabase } from '../../src/store/database';
import type { Database } from '../../src/store/schema';
import { FirstCalls } from '../../src/store/tasks/first-calls';
import { taskKeyOf } from '../../src/store/tasks/task-store';
import { firstCallTestHooks } from '../../src/temporal/first-call';
import { watchHubTasks } from '../../src/telemetry/metrics';
import type { TaskWorkflowResult } from '../../src/workflows/messages';
import { CREATED_ENLISTMENT, taskWorkflowId } from '../../src/workflows/messages';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { McpTestClient, TASKS_CAPS } from '../helpers/mcp-client';
import { expectCompletedUnmarked, staleTaskIds } from '../helpers/stale-status';
import {
  cancelEndsTask,
  confirmDeleteCompletes,
  createTask,
  endedTaskHistory,
  longTaskCompletes,
} from '../helpers/task-steps';
import { localActivityMarkers } from '../helpers/temporal';
import { until } from '../helpers/until';

/**
 * A task created by an API replica whose workflows go to a queue no worker polls yet: its workflow's first
 * workflow task waits in Temporal's queue, as under a burst of creations. The replica goes into `mine`
 * (closed by the caller); its config, with that queue, starts a worker for it.
 */
async function createOnHeldQueue(gw: TestGateway, mine: Runtime[], args: Record<string, unknown>) {
  const config = {
    ...gw.config,
    http: { ...gw.config.http, port: 0 },
    temporal: { ...gw.config.temporal, taskQueue: `held-${randomUUID()}` },
  };
  const api = await startRuntime({ config, logger: pino({ level: 'silent' }), api: true, worker: false });
  mine.push(api);
  const created = await new McpTestClient(`${api.url ?? ''}/v1/mcp/demo`).callTool('slow_compute', args, {
    capabilities: TASKS_CAPS,
  });
  return { config, taskId: String(created.body.result?.['taskId']) };
}

/** A task's watch hub row, if it has one. */
const watchRowOf = (db: Kysely<Database>, taskId: string) =>
  db.selectFrom('watch_hub').selectAll().where('task_key', '=', taskKeyOf(taskId)).executeTakeFirst();

const HUB_TASKS = {
  minPollIntervalMs: 50,
  maxPollIntervalMs: 2000,
  maxWatchMs: 60_000,
  pollFailureBudget: 5,
  watchBy: 'hub',
  hub: { leaseMs: 2000, claimEveryMs: 100 },
};

describe('watched by the hub', () => {
  let gw: TestGateway;
  let db: Kysely<Database>;
  const extra: Runtime[] = [];

  beforeAll(async () => {
    gw = await startTestGateway({ config: { tasks: HUB_TASKS as never } });
    expect(gw.config.tasks.watchBy).toBe('hub');
    db = await openDatabase(gw.config.store);
  });
  afterAll(async () => {
    for (const rt of extra) await rt.close();
    await db?.destroy();
    await gw?.close();
  });

  const rowOf = (taskId: string) => watchRowOf(db, taskId);

  const historyOf = async (taskId: string) => (await endedTaskHistory(gw, taskId)).events ?? [];

  test('a task completes with its result, polled by the hub and not by a watch activity', async () => {
    const taskId = await createTask(gw, 'slow_compute', { seconds: 1, label: 'hubbed' });
    const done = await gw.client.waitForTask(taskId);
    expect(done).toMatchObject({ status: 'completed', resultType: 'complete' });
    expect(JSON.stringify(done.result)).toContain('hubbed');
    const events = await historyOf(taskId);
    const history = JSON.stringify(events);
    expect(history).not.toContain('watchUpstreamTask');
    // After the hub's last word, no local activity: the hub's poll recorded the end and said so (the workflow
    // records it no more), and the hub removes its row after signalling (the workflow delists nothing).
    // Local activities' and patches' names are in their markers' payloads (bytes, not text in the
    // history's JSON): the markers are told apart by kind.
    const signalled = events
      .map((e) => e.workflowExecutionSignaledEventAttributes?.signalName)
      .lastIndexOf('watchObserved');
    expect(signalled).toBeGreaterThan(0);
    const markersAfter = events.slice(signalled).map((e) => e.markerRecordedEventAttributes?.markerName);
    // Two patches: the workflow's record skipped (poll-recorded-end) and its delisting skipped
    // (hub-removes-answered-row).
    expect(markersAfter.filter((m) => m === 'core_patch')).toHaveLength(2);
    expect(markersAfter).not.toContain('core_local_activity');
    await until(
      async () => (await rowOf(taskId)) === undefined,
      () => 'the ended task kept its row',
    );
    // One status event for the end.
    const statusEvents = await gw.runtime().store.listEvents(taskKeyOf(taskId));
    expect(statusEvents.filter((e) => e.status === 'completed')).toHaveLength(1);
  });

  test('input_required, answered with tasks/update, then completed', async () => {
    await confirmDeleteCompletes(gw, 'hub.txt');
  });

  test('tasks/cancel ends the task cancelled upstream and at the gateway', async () => {
    const taskId = await createTask(gw, 'slow_compute', { seconds: 30, label: 'cancel-me' });
    // Held by this worker's hub, which says so on /metrics; claimed, so no longer due (no stale mark).
    await until(
      async () => (await rowOf(taskId))?.lease_owner != null,
      () => 'the hub never claimed the task',
    );
    expect((await watchHubTasks.get()).values[0]?.value).toBeGreaterThanOrEqual(1);
    expect((await gw.runtime().store.getTask(taskKeyOf(taskId)))?.watchDueAt).toBeUndefined();
    await cancelEndsTask(gw, taskId);
    await until(
      async () => (await rowOf(taskId)) === undefined,
      () => 'the cancelled task kept its row',
    );
  });

  test('history does not grow with polls: a task polled many more times has as many events', async () => {
    const run = async (seconds: number) => {
      const before = gw.upstream.stats.tasksGet;
      const taskId = await createTask(gw, 'slow_compute', { seconds, label: `flat-${seconds}` });
      expect((await gw.client.waitForTask(taskId)).status).toBe('completed');
      return { polls: gw.upstream.stats.tasksGet - before, events: (await historyOf(taskId)).length };
    };
    const short = await run(0.5);
    const long = await run(4);
    // The upstream asks for a poll every 100 ms: the long task was polled dozens of times more.
    expect(long.polls).toBeGreaterThanOrEqual(short.polls + 10);
    // The same steps either way (enlist, one signal, record); a workflow task may batch differently.
    expect(long.events).toBeLessThanOrEqual(short.events + 6);
  });

  test('a row whose workflow is gone is dropped', async () => {
    const taskId = await createTask(gw, 'slow_compute', { seconds: 2, label: 'orphan' });
    await until(
      async () => (await rowOf(taskId))?.lease_owner != null,
      () => 'the hub never claimed the task',
    );
    const client = await gw.temporalClient();
    await client.workflow.getHandle(taskWorkflowId(taskKeyOf(taskId))).terminate('test: workflow gone');
    // The upstream task completes; the hub's signal finds no workflow and the row goes.
    await until(
      async () => (await rowOf(taskId)) === undefined,
      () => 'the orphaned row stayed',
    );
    // The end was recorded by the poll that saw it, not by the workflow (gone): the client reads it.
    const ended = (await gw.client.getTask(taskId)).body.result ?? {};
    expect(ended).toMatchObject({ status: 'completed', resultType: 'complete' });
    expect(JSON.stringify(ended.result)).toContain('orphan');
  });

  test("a task the API created is polled before its workflow runs; the workflow takes the hub's word for it", async () => {
    const mine: Runtime[] = [];
    try {
      // Halfway, a new status message: the hub polls on through it (the task still working) to the end.
      const { config, taskId } = await createOnHeldQueue(gw, mine, {
        seconds: 6,
        label: 'early',
        progress: true,
      });
      // Enlisted with its record, under the API's generation.
      expect((await rowOf(taskId))?.generation).toBe(CREATED_ENLISTMENT);
      // The hub polls it and records its end: the client reads it, its workflow still waiting to run.
      const done = await gw.client.waitForTask(taskId);
      expect(done).toMatchObject({ status: 'completed', resultType: 'complete' });
      expect(JSON.stringify(done.result)).toContain('early');
      const handle = (await gw.temporalClient()).workflow.getHandle(taskWorkflowId(taskKeyOf(taskId)));
      const waiting = (await handle.fetchHistory()).events ?? [];
      expect(waiting.some((e) => e.workflowTaskCompletedEventAttributes)).toBe(false);
      const signals = waiting.map((e) => e.workflowExecutionSignaledEventAttributes?.signalName);
      expect(signals.filter((name) => name === 'watchObserved').length).toBeGreaterThanOrEqual(2);
      await until(
        async () => (await rowOf(taskId)) === undefined,
        () => 'the answered row stayed',
      );
      // A worker for that queue runs the workflow: it takes the hub's latest word (the end) as its first
      // watch, with no local activity at all (no enlistment of its own, no record of the end, no delisting).
      mine.push(await startRuntime({ config, logger: pino({ level: 'silent' }), api: false, worker: true }));
      expect(await handle.result()).toEqual<TaskWorkflowResult>({ outcome: 'task', status: 'completed' });
      const events = (await handle.fetchHistory()).events ?? [];
      const markers = events.map((e) => e.markerRecordedEventAttributes?.markerName);
      expect(markers).not.toContain('core_local_activity');
      expect(await rowOf(taskId)).toBeUndefined();
      const statusEvents = await gw.runtime().store.listEvents(taskKeyOf(taskId));
      expect(statusEvents.filter((e) => e.status === 'completed')).toHaveLength(1);
    } finally {
      // The next test counts on this file's one worker hub.
      for (const rt of mine) await rt.close();
    }
  }, 90_000);

  test('a hub that dies without releasing: another worker takes its tasks after the lease', async () => {
    const hubA = gw.runtime().watchHub;
    expect(hubA).toBeDefined();
    // Long enough to outlast the takeover on a loaded machine (the lease, the stale mark, a second worker
    // starting): a task that ended first would lose its row at the second hub's first poll, unobserved.
    const taskId = await createTask(gw, 'slow_compute', { seconds: 15, label: 'takeover' });
    await until(
      async () => (await rowOf(taskId))?.lease_owner === hubA!.owner,
      () => 'the first hub never claimed the task',
    );
    // As a killed process: polling stops, the lease is not released.
    await hubA!.stop({ release: false });
    // With no hub alive to take it, tasks/get says its status has gone unchecked since the lease ended
    // (the upstream suggests 1 s: unchecked after 2 s), instead of presenting it as current.
    await until(
      async () => (await staleTaskIds(gw, [taskId])).length === 1,
      () => "tasks/get never marked the dead hub's task unchecked",
      20_000,
    );
    const workerB = await startRuntime({
      config: { ...gw.config, http: { ...gw.config.http, port: 0 } },
      logger: pino({ level: 'silent' }),
      api: false,
      worker: true,
    });
    extra.push(workerB);
    const hubB = workerB.watchHub!;
    expect(hubB.owner).not.toBe(hubA!.owner);
    await until(
      async () => (await rowOf(taskId))?.lease_owner === hubB.owner,
      () => 'the second hub never took the task over',
    );
    await expectCompletedUnmarked(gw, [taskId]);
    const done = await gw.client.waitForTask(taskId, undefined, 60_000);
    expect(JSON.stringify(done.result)).toContain('takeover');
  }, 90_000);
});

describe('watched by the hub, enlisting again when nothing is heard', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    // The workflow re-enlists every 100 ms (its safety net; the dev server fires such timers about once
    // a second, six events a round), so a 20-second task's history passes the dev server's lowered
    // continue-as-new threshold (60 events, test/global-setup.ts) and continues as new.
    gw = await startTestGateway({
      config: { tasks: { ...HUB_TASKS, hub: { ...HUB_TASKS.hub, reenlistAfterMs: 100 } } as never },
    });
  });
  afterAll(async () => {
    await gw?.close();
  });

  test('a long task continues as new in hub mode and still completes with its result', async () => {
    const taskId = await longTaskCompletes(gw, 20, 'hub-marathon');
    // The run that completed it was continued from an earlier one.
    const history = await endedTaskHistory(gw, taskId);
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
    expect(started?.continuedExecutionRunId).toBeTruthy();
  }, 90_000);
});

describe('watched by the hub, the API enlisting at the task’s own interval', () => {
  let gw: TestGateway;
  let db: Kysely<Database>;
  beforeAll(async () => {
    // The upstream suggests polling every 4 s: the API's row falls due at that interval (no later than the
    // workflow's own first poll would be), so a workflow started within 3.5 s of its task's record adopts
    // the row. The reconciler starts a task the API did not start after 4 s: too late to adopt.
    gw = await startTestGateway({
      upstream: { pollIntervalMs: 4000 },
      config: {
        tasks: {
          ...HUB_TASKS,
          maxPollIntervalMs: 5000,
          startTimeoutMs: 4000,
          reconcileEveryMs: 200,
          hub: { ...HUB_TASKS.hub, adoptApiEnlistment: true },
        },
      } as never,
    });
    db = await openDatabase(gw.config.store);
  });
  afterAll(async () => {
    firstCallTestHooks.afterRecord = undefined;
    await db?.destroy();
    await gw?.close();
  });

  const rowOf = (taskId: string) => watchRowOf(db, taskId);

  test("a workflow started with its task adopts the API's row: no enlistment of its own", async () => {
    const taskId = await createTask(gw, 'slow_compute', { seconds: 5, label: 'adopted' });
    const handle = (await gw.temporalClient()).workflow.getHandle(taskWorkflowId(taskKeyOf(taskId)));
    // The workflow has run (its first workflow task completed) and waits on the API's row, which a hub
    // polls: still the API's generation, never replaced by one of the workflow's own.
    await until(
      async () =>
        ((await handle.fetchHistory()).events ?? []).some((e) => e.workflowTaskCompletedEventAttributes),
      () => 'the workflow never ran',
    );
    await until(
      async () => (await rowOf(taskId))?.lease_owner != null,
      () => 'no hub claimed the API’s row',
    );
    expect((await rowOf(taskId))?.generation).toBe(CREATED_ENLISTMENT);
    expect(await gw.client.waitForTask(taskId)).toMatchObject({
      status: 'completed',
      resultType: 'complete',
    });
    expect(await handle.result()).toEqual<TaskWorkflowResult>({ outcome: 'task', status: 'completed' });
    // No local activity in the whole history: no enlistment, no record of the end, no delisting.
    expect(localActivityMarkers((await handle.fetchHistory()).events ?? [])).toBe(0);
  }, 60_000);

  test('a workflow whose first workflow task runs only after the row fell due still adopts it (it was started before)', async () => {
    // This file's worker hub polls the API's row while the workflow waits for a worker.
    const mine: Runtime[] = [];
    try {
      const { config, taskId } = await createOnHeldQueue(gw, mine, { seconds: 10, label: 'late-first-task' });
      // Polled by the hub from its due time (one 4 s interval), the workflow not yet run.
      await until(
        async () => (await rowOf(taskId))?.lease_owner != null,
        () => 'no hub claimed the API’s row',
      );
      mine.push(await startRuntime({ config, logger: pino({ level: 'silent' }), api: false, worker: true }));
      const handle = (await gw.temporalClient()).workflow.getHandle(taskWorkflowId(taskKeyOf(taskId)));
      expect(await handle.result()).toEqual<TaskWorkflowResult>({ outcome: 'task', status: 'completed' });
      // Its first workflow task ran after the row fell due, yet it enlisted nothing: the run's start (when
      // Temporal accepted it) decides, not its first workflow task.
      const events = (await handle.fetchHistory()).events ?? [];
      const firstTask = events.find((e) => e.workflowTaskStartedEventAttributes);
      const firstTaskAt = tsToMs(firstTask?.eventTime);
      const createdAt = Date.parse(
        String((await gw.runtime().store.getTask(taskKeyOf(taskId)))?.snapshot.createdAt),
      );
      expect(firstTaskAt - createdAt).toBeGreaterThan(4000);
      expect(localActivityMarkers(events)).toBe(0);
      // It waited on the row (the watch's timer), rather than finding the end told before it ran.
      expect(events.some((e) => e.timerStartedEventAttributes)).toBe(true);
    } finally {
      for (const rt of mine) await rt.close();
    }
  }, 60_000);

  test('a workflow started after the row could be polled (by the creation reconciler) enlists the task itself', async () => {
    let recordedKey: string | undefined;
    firstCallTestHooks.afterRecord = async (taskKey) => {
      recordedKey = taskKey;
      throw new Error('the API process stops here');
    };
    try {
      const reply = await gw.client.callTool('slow_compute', { seconds: 8 }, { capabilities: TASKS_CAPS });
      expect(reply.body.error).toBeDefined();
    } finally {
      firstCallTestHooks.afterRecord = undefined;
    }
    const key = recordedKey as string;
    expect(key).toBeDefined();
    // The reconciler starts it once the API's start is overdue (tasks.startTimeoutMs: as long as the
    // interval): the run began too late to adopt the row, so it writes its own enlistment.
    await until(
      async () => (await new FirstCalls(db).stateOf(key)) === 'started',
      () => 'the reconciler never started the task',
    );
    const handle = (await gw.temporalClient()).workflow.getHandle(taskWorkflowId(key));
    expect(await handle.result()).toEqual<TaskWorkflowResult>({ outcome: 'task', status: 'completed' });
    expect(localActivityMarkers((await handle.fetchHistory()).events ?? [])).toBeGreaterThanOrEqual(1);
    expect((await gw.runtime().store.getTask(key))?.snapshot.status).toBe('completed');
  }, 60_000);

  test('a reset of an adopted workflow replays its first watch as it ran (no enlistment of its own) and completes', async () => {
    const taskId = await createTask(gw, 'slow_compute', { seconds: 3, label: 'reset' });
    const client = await gw.temporalClient();
    const handle = client.workflow.getHandle(taskWorkflowId(taskKeyOf(taskId)));
    expect(await handle.result()).toEqual<TaskWorkflowResult>({ outcome: 'task', status: 'completed' });
    const events = (await handle.fetchHistory()).events ?? [];
    expect(localActivityMarkers(events)).toBe(0);
    // Reset to its last workflow task: the new run replays the first one, in which the workflow adopted
    // the API's row, under a new run id.
    const completions = events.filter((e) => e.workflowTaskCompletedEventAttributes);
    expect(completions.length).toBeGreaterThanOrEqual(2);
    const { runId } = await client.workflowService.resetWorkflowExecution({
      namespace: gw.config.temporal.namespace,
      workflowExecution: { workflowId: handle.workflowId },
      reason: 'test: reset after the adopted watch',
      workflowTaskFinishEventId: completions[completions.length - 1]?.eventId,
      requestId: randomUUID(),
    });
    const reset = client.workflow.getHandle(handle.workflowId, runId ?? undefined);
    expect(await reset.result()).toEqual<TaskWorkflowResult>({ outcome: 'task', status: 'completed' });
    expect(localActivityMarkers((await reset.fetchHistory()).events ?? [])).toBe(0);
  }, 60_000);
});
