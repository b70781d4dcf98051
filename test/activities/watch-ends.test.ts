/**
 * Which ends the poll that sees them records itself (src/activities/watch-poll.ts, recordEnd): an upstream
 * task that completed or failed is written to the store before the workflow hears of it; `cancelled` is
 * left to the workflow, which may have caused it on its way to a `failed` of its own (docs/decisions.md,
 * "The watch hub"); and a watch enlisted before the project slug was carried leaves every end to the
 * workflow. A recorded end is said so in the watch's result (the workflow then records it no more). The
 * store is a stand-in recording the writes: the choice is under test, and that a recorded end's detail
 * payload is written in the record's own transaction (test/integration/watch-hub.test.ts reads a recorded
 * end through tasks/get).
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import type { TaskSnapshot } from '../../src/protocol';
import { snapshotKey } from '../../src/store/tasks/snapshot-key';
import { watchActivities, watchInput, workingTask } from './watch-fixture';

const WORKING_KEY = snapshotKey({ status: 'working', statusMessage: 'busy' });

async function pollAnswering(status: string, projectSlug: string | undefined, storeHadAnEnd = false) {
  const recorded: Array<{ taskKey: string; snapshot: TaskSnapshot }> = [];
  // Where each detail payload was written: in the record's transaction, or on its own.
  const detailsIn: string[] = [];
  const recordTransaction = { name: 'the record transaction' };
  const answer = {
    ...workingTask(50),
    status,
    statusMessage: `now ${status}`,
    ...(status === 'completed' && { result: { content: [{ type: 'text', text: 'the answer' }] } }),
    ...(status === 'failed' && { error: { code: -32000, message: 'it broke' } }),
  };
  const activities = watchActivities(() => answer, {
    store: {
      watchStarted: async () => {},
      watchDue: async () => {},
      recordSnapshot: async (
        taskKey: string,
        snapshot: TaskSnapshot,
        alsoIn?: (trx: unknown) => Promise<void>,
      ) => {
        await alsoIn?.(recordTransaction);
        recorded.push({ taskKey, snapshot });
        return !storeHadAnEnd; // the store's first terminal write is final
      },
    } as never,
    payloads: {
      put: async (_key: string, kind: string, _value: unknown, db?: unknown) => {
        if (kind === 'detail') detailsIn.push(db === recordTransaction ? 'record' : 'alone');
        return 'pl_1';
      },
    } as never,
    settings: { minPollIntervalMs: 50, maxPollIntervalMs: 60_000, maxWatchMs: 5_000, pollFailureBudget: 3 },
  });
  const input = { ...watchInput(answer.taskId, WORKING_KEY, 50), ...(projectSlug && { projectSlug }) };
  const outcome = await new MockActivityEnvironment().run(activities.watchUpstreamTask, input);
  return { outcome, recorded, detailsIn };
}

test.each(['completed', 'failed'])(
  'a task that %s upstream is recorded by the poll that saw it',
  async (status) => {
    const { outcome, recorded, detailsIn } = await pollAnswering(status, 'demo');
    // The workflow still hears of it, told that it is recorded (it records it no more).
    expect(outcome).toMatchObject({ kind: 'changed', observation: { status }, recorded: true });
    expect(recorded).toHaveLength(1);
    // Its detail is stored all the same (for a workflow from before `recorded`), in the same commit.
    expect(detailsIn).toEqual(['record']);
    expect(recorded[0]).toMatchObject({
      taskKey: 'task-key',
      snapshot: { status, statusMessage: `now ${status}` },
    });
    if (status === 'completed') expect(JSON.stringify(recorded[0]?.snapshot.result)).toContain('the answer');
    else expect(recorded[0]?.snapshot.error).toMatchObject({ message: 'it broke' });
  },
);

test('cancelled upstream is left to the workflow, which may have cancelled it for a reason of its own', async () => {
  const { outcome, recorded } = await pollAnswering('cancelled', 'demo');
  expect(outcome).toMatchObject({ kind: 'changed', observation: { status: 'cancelled' } });
  expect(outcome).not.toHaveProperty('recorded');
  expect(recorded).toHaveLength(0);
});

test('a change that is not an end is not recorded by the poll', async () => {
  // Still working, with a new status message: a change the workflow records, not an end.
  const { outcome, recorded, detailsIn } = await pollAnswering('working', 'demo');
  expect(outcome).toMatchObject({ kind: 'changed', observation: { status: 'working' } });
  expect(outcome).not.toHaveProperty('recorded');
  expect(recorded).toHaveLength(0);
  expect(detailsIn).toEqual(['alone']); // for the workflow's own record of it
});

test('a watch enlisted without the project slug leaves the end to its workflow', async () => {
  const { outcome, recorded } = await pollAnswering('completed', undefined);
  expect(outcome).toMatchObject({ kind: 'changed', observation: { status: 'completed' } });
  expect(outcome).not.toHaveProperty('recorded');
  expect(recorded).toHaveLength(0);
});

test('an end the store already had (the workflow recorded one of its own first) is not called recorded', async () => {
  // The workflow then records its observation as before; the store keeps the first end either way.
  const { outcome, recorded, detailsIn } = await pollAnswering('completed', 'demo', true);
  expect(outcome).toMatchObject({ kind: 'changed', observation: { status: 'completed' } });
  expect(outcome).not.toHaveProperty('recorded');
  expect(recorded).toHaveLength(1);
  expect(detailsIn).toEqual(['record']); // stored though the record changed nothing: the workflow reads it
});
