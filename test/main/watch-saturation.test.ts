/**
 * A worker with every activity slot taken (issue 23, "No silent staleness"): with
 * `temporal.maxConcurrentActivities` 3 and six long tasks on a real HTTP upstream, three tasks are watched
 * and three wait in Temporal's queue, unpolled. The worker says so: `/readyz` stays 200 with
 * `degraded: ["watches"]`, `/metrics` shows `taskrouter_watches_running` at the cap and a growing
 * `taskrouter_watch_lag_seconds` for the upstream, and tasks/get of a waiting task marks its status as
 * not checked since (`_meta["com.taskrouter/staleStatus"]`) without changing it. Once the upstream's
 * tasks finish and every task has been seen finished, all of it clears.
 */
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { metricSample as sample } from '../helpers/metrics';
import { expectCompletedUnmarked, healthOf, STALE, staleTaskIds } from '../helpers/stale-status';
import { until } from '../helpers/until';

const CAP = 3;
const TASKS = 6;
let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({
    temporal: { maxConcurrentActivities: CAP },
    // What saturates here is the watch activities' slots (the hub's own cap: watch-hub-saturation).
    config: { health: { publicMetrics: true } as never, tasks: { watchBy: 'activity' } as never },
  });
  expect(gw.config.temporal.maxConcurrentActivities).toBe(CAP);
});

afterAll(async () => {
  await gw?.close();
});

const LAG = { project: 'demo', upstream: 'example' };

test('a saturated worker says so on /readyz, /metrics and tasks/get, and recovers', async () => {
  let state = await healthOf(gw);
  expect(state.ready).toEqual({
    status: 200,
    body: expect.not.objectContaining({ degraded: expect.anything() }),
  });

  const ids: string[] = [];
  for (let i = 0; i < TASKS; i++) {
    const reply = await gw.client.callTool('slow_compute', { seconds: 20, label: `t${i}` });
    const taskId = reply.body.result?.['taskId'];
    expect(typeof taskId).toBe('string');
    ids.push(String(taskId));
  }

  // Saturated: degraded but ready, the cap's worth of watches running, the rest lagging.
  const refresh = async () => {
    state = await healthOf(gw);
  };
  const saturated = () =>
    state.ready.status === 200 &&
    JSON.stringify(state.ready.body['degraded']) === '["watches"]' &&
    sample(state.metrics, 'taskrouter_watches_running') === CAP &&
    (sample(state.metrics, 'taskrouter_watch_lag_seconds', LAG) ?? 0) > 0;
  await until(
    async () => {
      await refresh();
      return saturated();
    },
    () =>
      `not saturated: ${JSON.stringify(state.ready)} running=${sample(state.metrics, 'taskrouter_watches_running')} lag=${sample(state.metrics, 'taskrouter_watch_lag_seconds', LAG)}`,
    60_000,
  );
  expect(state.ready.body['ready']).toBe(true);
  const firstLag = sample(state.metrics, 'taskrouter_watch_lag_seconds', LAG) ?? 0;

  // The lag grows while the waiting tasks stay unwatched.
  let laterLag = firstLag;
  await until(
    async () => {
      laterLag = sample((await healthOf(gw)).metrics, 'taskrouter_watch_lag_seconds', LAG) ?? 0;
      return laterLag > firstLag;
    },
    () => `lag did not grow past ${firstLag}`,
    30_000,
  );

  // tasks/get of the waiting tasks says since when their status was not checked; the watched ones do not.
  let marked: string[] = [];
  await until(
    async () => {
      marked = await staleTaskIds(gw, ids);
      return marked.length === TASKS - CAP;
    },
    () => `${marked.length} tasks marked stale, expected ${TASKS - CAP}`,
    30_000,
  );
  const stale = (await gw.client.getTask(marked[0] as string)).body.result ?? {};
  expect(stale['status']).toBe('working');
  const note = (stale['_meta'] as Record<string, { checkedAt: string; overdueMs: number }>)[STALE];
  expect(Date.parse(note?.checkedAt ?? '')).toBeLessThanOrEqual(Date.now());
  expect(note?.overdueMs).toBeGreaterThan(2000);

  // The upstream finishes them; every task is seen completed, unmarked, and the worker recovers.
  await expectCompletedUnmarked(gw, ids);
  await until(
    async () => {
      await refresh();
      return (
        state.ready.status === 200 &&
        state.ready.body['degraded'] === undefined &&
        sample(state.metrics, 'taskrouter_watch_lag_seconds', LAG) === 0 &&
        sample(state.metrics, 'taskrouter_watches_running') === 0
      );
    },
    () =>
      `not recovered: ${JSON.stringify(state.ready)} lag=${sample(state.metrics, 'taskrouter_watch_lag_seconds', LAG)}`,
    60_000,
  );
}, 180_000);
