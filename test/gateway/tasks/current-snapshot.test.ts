/**
 * Which task snapshots cost a Temporal query (src/gateway/tasks/task-methods.ts, currentSnapshot): only a task
 * waiting for input asks its live workflow (which hides answers given since the last poll); a working or
 * ended task is answered from the store. The engine here is a stand-in that records the queries it gets:
 * what is under test is the decision, not Temporal.
 */
import type { TaskSnapshot } from '../../../src/protocol';
import type { GatewayDeps } from '../../../src/gateway/context';
import { currentSnapshot } from '../../../src/gateway/tasks/task-methods';
import type { TaskRecord } from '../../../src/store/tasks/task-store';
import { snapshotKey } from '../../../src/store/tasks/snapshot-key';

function setup(live: (stored: TaskSnapshot) => unknown) {
  const queried: string[] = [];
  let stored: TaskSnapshot | undefined;
  const deps = {
    engine: {
      snapshot: async (workflowId: string) => {
        queried.push(workflowId);
        return live(stored!);
      },
    },
    logger: { warn: () => undefined },
  } as unknown as GatewayDeps;
  const snapshotOf = (snapshot: TaskSnapshot) => {
    stored = snapshot;
    return currentSnapshot(deps, { workflowId: 'wf-1', snapshot } as TaskRecord);
  };
  return { queried, snapshotOf };
}

const base = { createdAt: '2026-12-05T00:00:00Z', lastUpdatedAt: '2026-12-05T00:00:01Z', ttlMs: null };

test('a working task is answered from the store, without a query', async () => {
  const { queried, snapshotOf } = setup(() => {
    throw new Error('no query expected');
  });
  const working = { ...base, status: 'working', statusMessage: 'step 2 of 5' } as TaskSnapshot;
  await expect(snapshotOf(working)).resolves.toEqual(working);
  expect(queried).toEqual([]);
});

test('an ended task is answered from the store, without a query', async () => {
  const { queried, snapshotOf } = setup(() => {
    throw new Error('no query expected');
  });
  for (const status of ['completed', 'failed', 'cancelled'] as const) {
    const ended = { ...base, status } as TaskSnapshot;
    await expect(snapshotOf(ended)).resolves.toEqual(ended);
  }
  expect(queried).toEqual([]);
});

test('a task waiting for input asks its workflow, which hides the answers given since the last poll', async () => {
  const inputRequests = {
    a: { method: 'elicitation/create', params: { message: 'first?' } },
    b: { method: 'elicitation/create', params: { message: 'second?' } },
  };
  const { queried, snapshotOf } = setup((stored) => ({
    status: 'input_required',
    key: snapshotKey(stored),
    inputs: { b: { method: 'elicitation/create' } },
  }));
  const waiting = { ...base, status: 'input_required', inputRequests } as unknown as TaskSnapshot;
  const answer = await snapshotOf(waiting);
  expect(queried).toEqual(['wf-1']);
  expect(answer.status).toBe('input_required');
  expect(Object.keys(answer.inputRequests ?? {})).toEqual(['b']);
});
