/**
 * What the saturation tests (test/main/watch-saturation, watch-hub-saturation) read of a gateway that
 * cannot watch every task: its `/readyz` and `/metrics`, which of the tasks tasks/get marks as not checked
 * since (`_meta["com.taskrouter/staleStatus"]`), and that every task ends completed and unmarked.
 */
import type { TestGateway } from './gateway';
import { metricsText, readyz } from './metrics';

export const STALE = 'com.taskrouter/staleStatus';

/** The gateway's `/readyz` and `/metrics` as of now. */
export async function healthOf(gw: TestGateway) {
  const base = gw.client.url.replace(/\/v1\/mcp\/demo$/, '');
  return { ready: await readyz(base), metrics: await metricsText(base) };
}

/** Which of `ids` tasks/get answers as working with the stale-status mark. */
export async function staleTaskIds(gw: TestGateway, ids: string[]): Promise<string[]> {
  const replies = await Promise.all(ids.map((id) => gw.client.getTask(id)));
  return replies
    .filter((r) => r.body.result?.['status'] === 'working')
    .filter((r) => (r.body.result?.['_meta'] as Record<string, unknown> | undefined)?.[STALE] !== undefined)
    .map((r) => String(r.body.result?.['taskId']));
}

/** Waits for every task of `ids` to be seen completed, without the stale-status mark. */
export async function expectCompletedUnmarked(gw: TestGateway, ids: string[]): Promise<void> {
  for (const id of ids) {
    const done = await gw.client.waitForTask(id, undefined, 120_000);
    expect(done['status']).toBe('completed');
    expect((done['_meta'] as Record<string, unknown>)[STALE]).toBeUndefined();
  }
}
