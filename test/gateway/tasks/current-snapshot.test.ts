/**
 * What a task's client sees (src/gateway/tasks/task-methods.ts, currentSnapshot), from the store alone:
 * a task waiting for input hides the requests its client has answered (recorded hashes of their keys),
 * and is `working` once all are; nothing else changes what is stored. The function takes no engine: no
 * snapshot of any status costs a Temporal query.
 */
import type { TaskSnapshot } from '../../../src/protocol';
import { currentSnapshot } from '../../../src/gateway/tasks/task-methods';
import { answeredInputHash } from '../../../src/store/tasks/answered-inputs';
import type { TaskRecord } from '../../../src/store/tasks/task-store';

const base = { createdAt: '2026-12-05T00:00:00Z', lastUpdatedAt: '2026-12-05T00:00:01Z', ttlMs: null };
const inputRequests = {
  a: { method: 'elicitation/create', params: { message: 'first?' } },
  b: { method: 'elicitation/create', params: { message: 'second?' } },
};
const waiting = { ...base, status: 'input_required', inputRequests } as unknown as TaskSnapshot;

function seen(snapshot: TaskSnapshot, answered?: string[]): TaskSnapshot {
  return currentSnapshot({
    workflowId: 'wf-1',
    snapshot,
    ...(answered && { answeredInputs: answered.map(answeredInputHash) }),
  } as TaskRecord);
}

test('a working task is the stored snapshot, without input requests', () => {
  const working = { ...base, status: 'working', statusMessage: 'step 2 of 5' } as TaskSnapshot;
  expect(seen({ ...working, inputRequests } as TaskSnapshot)).toEqual(working);
});

test('an ended task is the stored snapshot', () => {
  for (const status of ['completed', 'failed', 'cancelled'] as const) {
    const ended = { ...base, status } as TaskSnapshot;
    expect(seen(ended)).toEqual(ended);
  }
});

test('a task waiting for input shows every request until its client answers one', () => {
  expect(seen(waiting)).toEqual(waiting);
});

test('answered requests are hidden at once, not after the next poll', () => {
  const answer = seen(waiting, ['a']);
  expect(answer.status).toBe('input_required');
  expect(Object.keys(answer.inputRequests ?? {})).toEqual(['b']);
  expect(answer.inputRequests?.b).toEqual(inputRequests.b);
});

test('once every request is answered the task is working again, as far as its client knows', () => {
  const answer = seen(waiting, ['b', 'a']);
  expect(answer.status).toBe('working');
  expect(answer.inputRequests).toBeUndefined();
});

test('a key answered in an earlier round hides nothing of a later one (keys are unique per task)', () => {
  const answer = seen(waiting, ['earlier']);
  expect(answer.status).toBe('input_required');
  expect(Object.keys(answer.inputRequests ?? {})).toEqual(['a', 'b']);
});
