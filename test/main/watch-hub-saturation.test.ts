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
import { metricSample, metricsText, readyz as readyzOf } from '../helpers/metrics';

/** Runs `check` until it holds (every 100 ms); throws `failure()` after `timeoutMs`. */
async function until(check: () => Promise<boolean>, failure: () => string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(failure());
    await new Promise((r) => setTimeout(r, 100));
  }
}

const CAP = 2;
const TASKS = 4;
const STALE = 'com.taskrouter/staleStatus';
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

const base = () => gw.client.url.replace(/\/v1\/mcp\/demo$/, '');
const readyz = () => readyzOf(base());
const metrics = () => metricsText(base());
const sample = metricSample;

test('a hub at its cap says so on /readyz, /metrics and tasks/get, and recovers', async () => {
  const ids: string[] = [];
  for (let i = 0; i < TASKS; i++) {
    const reply = await gw.client.callTool('slow_compute', { seconds: 20, label: `h${i}` });
    ids.push(String(reply.body.result?.['taskId']));
  }
  let state = { ready: await readyz(), metrics: await metrics() };
  const refresh = async () => {
    state = { ready: await readyz(), metrics: await metrics() };
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
      const replies = await Promise.all(ids.map((id) => gw.client.getTask(id)));
      marked = replies.filter(
        (r) =>
          r.body.result?.['status'] === 'working' &&
          (r.body.result?.['_meta'] as Record<string, unknown> | undefined)?.[STALE] !== undefined,
      ).length;
      return marked === TASKS - CAP;
    },
    () => `${marked} tasks marked stale, expected ${TASKS - CAP}`,
    30_000,
  );

  for (const id of ids) {
    const done = await gw.client.waitForTask(id, undefined, 120_000);
    expect(done['status']).toBe('completed');
    expect((done['_meta'] as Record<string, unknown>)[STALE]).toBeUndefined();
  }
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
