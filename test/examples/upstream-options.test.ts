/**
 * The example upstream's options over real HTTP: the tasks extension switched at runtime, task expiry,
 * closing with work in flight and task ids.
 */
import { startExampleUpstream } from '../../examples/upstream/server';
import { TASKS_EXTENSION } from '../../src/protocol';
import { BASE_OPTIONS, call, errorOf, resultOf, rpc, TASK_ID, waitFor } from './upstream-client';

describe('example upstream options', () => {
  it('can stop advertising the tasks extension at runtime', async () => {
    const upstream = await startExampleUpstream({ ...BASE_OPTIONS, advertiseTasks: false, discoverTtlMs: 5 });
    try {
      const before = resultOf(await rpc(upstream.url, 'server/discover'));
      expect(before.capabilities).toEqual({ tools: {} });
      expect(before.ttlMs).toBe(5);
      upstream.setAdvertiseTasks(true);
      const after = resultOf(await rpc(upstream.url, 'server/discover'));
      expect(after.capabilities).toEqual({ tools: {}, extensions: { [TASKS_EXTENSION]: {} } });
    } finally {
      await upstream.close();
    }
  });

  it('forgets tasks after their ttlMs', async () => {
    // Long enough that a loaded machine still reads the task before it goes (150 ms did not, once).
    const ttlMs = 1500;
    const upstream = await startExampleUpstream({ ...BASE_OPTIONS, ttlMs });
    try {
      const created = resultOf(await call(upstream.url, 'slow_compute', { seconds: 0, label: 't' }));
      expect(created.ttlMs).toBe(ttlMs);
      const taskId = String(created.taskId);
      await waitFor(upstream.url, taskId, ['completed']);
      // The lifetime counts from createdAt.
      const goneAt = Date.parse(String(created.createdAt)) + ttlMs + 50;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, goneAt - Date.now())));
      expect(errorOf(await rpc(upstream.url, 'tasks/get', { taskId })).code).toBe(-32602);
    } finally {
      await upstream.close();
    }
  });

  it('closes promptly with tasks and synchronous calls in flight', async () => {
    const upstream = await startExampleUpstream(BASE_OPTIONS);
    resultOf(await call(upstream.url, 'slow_compute', { seconds: 60, label: 'bg' }));
    const pending = call(upstream.url, 'slow_compute', { seconds: 60, label: 'fg' }, { caps: {} }).catch(
      (err: unknown) => err,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    await upstream.close();
    expect(Date.now() - started).toBeLessThan(1000);
    // fetch fails (its TypeError comes from another realm under jest, so no instanceof check).
    expect(await pending).toHaveProperty('message', 'fetch failed');
  });

  it('mints distinct, unguessable task ids', async () => {
    const upstream = await startExampleUpstream(BASE_OPTIONS);
    try {
      for (let i = 0; i < 5; i++) await call(upstream.url, 'slow_compute', { seconds: 60, label: `${i}` });
      const ids = upstream.stats.taskIds;
      expect(new Set(ids).size).toBe(5);
      for (const id of ids) expect(id).toMatch(TASK_ID);
    } finally {
      await upstream.close();
    }
  });
});
