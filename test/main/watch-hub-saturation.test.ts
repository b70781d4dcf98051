/**
 * A worker whose watch hub holds all it may (`tasks.watchBy: hub`, `tasks.hub.maxTasks` 2; issue 23
 * items 1 and 2): with four long tasks on a real HTTP upstream, the hub holds two and the other two wait,
 * due and unpolled. The worker says so as it does for watch activities: `/readyz` stays 200 with
 * `degraded: ["watchHub"]`, `/metrics` shows `taskrouter_watch_hub_tasks` at the cap and a
 * `taskrouter_watch_lag_seconds` above 0 for the upstream, and tasks/get of a waiting task marks its status
 * as not checked since (`_meta["com.taskrouter/staleStatus"]`). Once the held tasks end, the hub takes the
 * others; every task is seen completed and all of it clears.
 */
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { metricSample as sample } from '../helpers/metrics';
import { expectCompletedUnmarked, healthOf, staleTaskIds } from '../helpers/stale-status';
import { until } from '../helpers/until';

const CAP = 2;
const TASKS = 4;
const LAG = { project: 'demo', upstream: 'example' };
let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({
    config: {
      health: { publicMetrics: true } as never,
      tasks: {
        minPollIntervalMs: 50,
        maxPollIntervalMs: 2000,
        maxWatchMs: 60_000,
        pollFailureBudget: 5,
        watchBy: 'hub',
        hub: { maxTasks: CAP, leaseMs: 2000, claimEveryMs: 100 },
      } as never,
    },
  });
  expect(gw.config.tasks.hub.maxTasks).toBe(CAP);
});

afterAll(async () => {
  await gw?.close();
});

test('a hub at its cap says so on /readyz, /metrics and tasks/get, and recovers', async () => {
  const ids: string[] = [];
  for (let i = 0; i < TASKS; i++) {
    const reply = await gw.client.callTool('slow_compute', { seconds: 20, label: `h${i}` });
    ids.push(String(reply.body.result?.['taskId']));
  }
  let state = await healthOf(gw);
  const refresh = async () => {
    state = await healthOf(gw);
  };
  await until(
    async () => {
      await refresh();
      return (
        state.ready.status === 200 &&
        JSON.stringify(state.ready.body['degraded']) === '["watchHub"]' &&
        sample(state.metrics, 'taskrouter_watch_hub_tasks') === CAP &&
        (sample(state.metrics, 'taskrouter_watch_lag_seconds', LAG) ?? 0) > 0
      );
    },
    () =>
      `not at the cap: ${JSON.stringify(state.ready)} held=${sample(state.metrics, 'taskrouter_watch_hub_tasks')} lag=${sample(state.metrics, 'taskrouter_watch_lag_seconds', LAG)}`,
    60_000,
  );
  expect(state.ready.body['ready']).toBe(true);

  // tasks/get of the two waiting tasks says since when their status was not checked.
  let marked = 0;
  await until(
    async () => {
      marked = (await staleTaskIds(gw, ids)).length;
      return marked === TASKS - CAP;
    },
    () => `${marked} tasks marked stale, expected ${TASKS - CAP}`,
    30_000,
  );

  await expectCompletedUnmarked(gw, ids);
  await until(
    async () => {
      await refresh();
      return (
        state.ready.body['degraded'] === undefined &&
        sample(state.metrics, 'taskrouter_watch_lag_seconds', LAG) === 0 &&
        sample(state.metrics, 'taskrouter_watch_hub_tasks') === 0
      );
    },
    () => `not recovered: ${JSON.stringify(state.ready)}`,
    60_000,
  );
}, 180_000);
