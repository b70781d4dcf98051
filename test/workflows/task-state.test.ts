import { META, PROTOCOL_VERSION, UpdateTaskParamsSchema } from '../../src/protocol';
import type { CarriedTaskState, TaskObservation } from '../../src/workflows/messages';
import { TaskState } from '../../src/workflows/task-state';

const FORM = { method: 'elicitation/create', mode: 'form' };

/** A workflow observation: metadata, a detail id and the outstanding input kinds (no payload). */
function snapshot(overrides: Partial<TaskObservation> = {}): TaskObservation {
  return {
    status: 'input_required',
    createdAt: '2026-07-28T10:00:00Z',
    lastUpdatedAt: '2026-07-28T10:00:00Z',
    ttlMs: 60_000,
    pollIntervalMs: 1000,
    key: 'k1',
    detailRef: 'pl_detail',
    inputs: { name: FORM, city: FORM },
    ...overrides,
  };
}

function state(observed: TaskObservation = snapshot(), carried: Partial<CarriedTaskState> = {}): TaskState {
  return new TaskState({
    upstreamTaskId: 'up-1',
    observed,
    answeredKeys: [],
    pendingInputs: [],
    cancelSent: false,
    ...carried,
  });
}

describe('TaskState.acceptInput', () => {
  const answer = (keys: string[], ref = 'pl_1') => ({ ref, keys });

  it('keeps outstanding keys only and queues them with their payload id', () => {
    const t = state();
    t.acceptInput(answer(['name', 'unknown']));
    expect(t.s.pendingInputs).toEqual([{ ref: 'pl_1', keys: ['name'] }]);
    expect(t.s.answeredKeys).toEqual(['name']);
    expect(t.hasWork).toBe(true);
  });

  it('ignores a key that was already answered, and duplicates within one answer', () => {
    const t = state();
    t.acceptInput(answer(['name', 'name'], 'pl_1'));
    t.acceptInput(answer(['name', 'city'], 'pl_2'));
    expect(t.s.pendingInputs).toEqual([
      { ref: 'pl_1', keys: ['name'] },
      { ref: 'pl_2', keys: ['city'] },
    ]);
    expect(t.s.answeredKeys).toEqual(['name', 'city']);
  });

  it('ignores a key answered before a continue-as-new (carried answeredKeys)', () => {
    const t = state(snapshot(), { answeredKeys: ['name'] });
    t.acceptInput(answer(['name']));
    expect(t.s.pendingInputs).toEqual([]);
    expect(t.hasWork).toBe(false);
  });

  it('queues nothing when no key is outstanding', () => {
    const t = state(snapshot({ status: 'working', inputs: undefined }));
    t.acceptInput(answer(['name']));
    expect(t.s.pendingInputs).toEqual([]);
    expect(t.s.answeredKeys).toEqual([]);
  });

  it('takes an answer to a request the gateway showed open before the workflow observed it', () => {
    // The watch recorded input_required in the store; the workflow has not applied that change yet.
    const t = state(snapshot({ status: 'working', inputs: undefined }));
    t.acceptInput({ ref: 'pl_1', keys: ['name', 'other'], open: ['name'] });
    expect(t.s.pendingInputs).toEqual([{ ref: 'pl_1', keys: ['name'] }]);
    expect(t.s.answeredKeys).toEqual(['name']);
    // Once the workflow observes the request, it is shown answered: the client is not asked again.
    t.observe(snapshot({ inputs: { name: FORM } }));
    expect(t.present().status).toBe('working');
  });

  it('ignores keys that exist only on Object.prototype, as they arrive from tasks/update', () => {
    const { inputResponses } = UpdateTaskParamsSchema.parse({
      _meta: { [META.protocolVersion]: PROTOCOL_VERSION, [META.clientCapabilities]: {} },
      taskId: 'gw-1',
      inputResponses: {
        constructor: { action: 'accept' },
        name: { action: 'accept' },
        toString: { action: 'x' },
      },
    });
    const t = state();
    t.acceptInput(answer(Object.keys(inputResponses)));
    expect(t.s.pendingInputs).toEqual([{ ref: 'pl_1', keys: ['name'] }]);
    expect(t.s.answeredKeys).toEqual(['name']);
  });

  it.each(['constructor', 'hasOwnProperty'])('queues nothing for %j on a working task', (key) => {
    const t = state(snapshot({ status: 'working', inputs: undefined }));
    t.acceptInput(answer([key]));
    expect(t.s.pendingInputs).toEqual([]);
    expect(t.hasWork).toBe(false);
  });

  it.each(['completed', 'failed', 'cancelled'] as const)('ignores input once the task is %s', (status) => {
    const t = state(snapshot({ status }));
    t.acceptInput(answer(['name']));
    expect(t.s.pendingInputs).toEqual([]);
    expect(t.s.answeredKeys).toEqual([]);
    expect(t.hasWork).toBe(false);
  });
});

describe('TaskState.present', () => {
  it('hides answered keys at once', () => {
    const t = state();
    t.acceptInput({ ref: 'pl_1', keys: ['name'] });
    const p = t.present();
    expect(p.status).toBe('input_required');
    expect(p.inputs).toEqual({ city: FORM });
  });

  it('shows working without inputRequests when every key is answered', () => {
    const t = state();
    t.acceptInput({ ref: 'pl_1', keys: ['name', 'city'] });
    const p = t.present();
    expect(p.status).toBe('working');
    expect(p).not.toHaveProperty('inputs');
    expect(p.createdAt).toBe('2026-07-28T10:00:00Z');
    expect(p.ttlMs).toBe(60_000);
  });

  it('keeps hiding an answered key when the upstream still lists it in a later observation', () => {
    const t = state();
    t.acceptInput({ ref: 'pl_1', keys: ['name'] });
    t.observe(snapshot({ inputs: { name: FORM, city: FORM, zip: FORM } }));
    expect(Object.keys(t.present().inputs ?? {})).toEqual(['city', 'zip']);
  });

  it('returns non-input_required observations unchanged', () => {
    const done = snapshot({ status: 'completed', inputs: undefined, detailRef: 'pl_done' });
    expect(state(done).present()).toEqual(done);
  });

  it('does not modify the observation', () => {
    const t = state();
    t.acceptInput({ ref: 'pl_1', keys: ['name', 'city'] });
    t.present();
    expect(t.s.observed.status).toBe('input_required');
    expect(Object.keys(t.s.observed.inputs ?? {})).toEqual(['name', 'city']);
  });
});

describe('TaskState.observe and terminal', () => {
  it('keeps the gateway createdAt and takes everything else from the observation', () => {
    const t = state();
    t.observe(
      snapshot({
        status: 'completed',
        createdAt: '2030-01-01T00:00:00Z',
        lastUpdatedAt: '2026-07-28T10:05:00Z',
        ttlMs: null,
        inputs: undefined,
        detailRef: 'pl_done',
      }),
    );
    expect(t.s.observed.createdAt).toBe('2026-07-28T10:00:00Z');
    expect(t.s.observed.lastUpdatedAt).toBe('2026-07-28T10:05:00Z');
    expect(t.s.observed.ttlMs).toBeNull();
    expect(t.s.observed.detailRef).toBe('pl_done');
    expect(t.terminal).toBe(true);
  });

  it.each([
    ['working', false],
    ['input_required', false],
    ['completed', true],
    ['failed', true],
    ['cancelled', true],
  ] as const)('%s is terminal: %s', (status, terminal) => {
    expect(state(snapshot({ status })).terminal).toBe(terminal);
  });
});
