import { TASK_ID_PLACEHOLDER } from '../../src/protocol';
import { clampPollInterval, toSnapshot } from '../../src/activities/snapshot';
import { finishedSnapshot } from '../../src/activities/support';

const bounds = { minPollIntervalMs: 500, maxPollIntervalMs: 10_000 };

const task = {
  taskId: 'upstream-secret-id',
  status: 'working',
  createdAt: '2026-07-28T10:30:00Z',
  lastUpdatedAt: '2026-07-28T10:31:00Z',
  ttlMs: 3_600_000,
  pollIntervalMs: 2000,
};

describe('clampPollInterval', () => {
  it.each([
    [2000, 2000],
    [500, 500],
    [10_000, 10_000],
    [0, 500],
    [1, 500],
    [499, 500],
    [10_001, 10_000],
    [86_400_000, 10_000],
  ])('clamps %d to %d', (suggested, expected) => {
    expect(clampPollInterval(suggested, bounds)).toBe(expected);
  });

  it('defaults to twice the minimum when the upstream suggests nothing', () => {
    expect(clampPollInterval(undefined, bounds)).toBe(1000);
  });

  it('keeps the default within the maximum', () => {
    expect(clampPollInterval(undefined, { minPollIntervalMs: 800, maxPollIntervalMs: 1000 })).toBe(1000);
  });
});

describe('toSnapshot', () => {
  it('drops the upstream id, resultType, requestState and hop meta; keeps task meta and extension fields', () => {
    const s = toSnapshot(
      {
        ...task,
        resultType: 'task',
        requestState: 'opaque',
        _meta: {
          'io.modelcontextprotocol/serverInfo': { name: 'u', version: '1' },
          'io.modelcontextprotocol/related-task': { taskId: 'upstream-secret-id' },
          'com.example/trace': 'abc',
        },
        'com.example/x': 1,
      },
      bounds,
      'upstream-secret-id',
    );
    expect(s).toEqual({
      status: 'working',
      createdAt: task.createdAt,
      lastUpdatedAt: task.lastUpdatedAt,
      ttlMs: 3_600_000,
      pollIntervalMs: 2000,
      meta: { 'com.example/trace': 'abc' },
      extensions: { 'com.example/x': 1 },
    });
    expect(JSON.stringify(s)).not.toContain('upstream-secret-id');
  });

  it('rewrites every echo of the upstream id to the placeholder the gateway fills in', () => {
    const s = toSnapshot(
      {
        ...task,
        status: 'completed',
        statusMessage: 'task upstream-secret-id done',
        result: { content: [{ type: 'text', text: 'see upstream-secret-id' }] },
      },
      bounds,
      'upstream-secret-id',
    );
    expect(s?.statusMessage).toBe(`task ${TASK_ID_PLACEHOLDER} done`);
    expect(JSON.stringify(s?.result)).toContain(TASK_ID_PLACEHOLDER);
    expect(JSON.stringify(s)).not.toContain('upstream-secret-id');
  });

  it('bounds re-published metadata and notes what was dropped', () => {
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`com.example/k${i}`, i]));
    const s = toSnapshot({ ...task, _meta: many, ['x'.repeat(200)]: 1 }, bounds);
    expect(Object.keys(s?.meta ?? {}).filter((k) => k.startsWith('com.example/'))).toHaveLength(32);
    expect(s?.extensions).toBeUndefined();
    expect(s?.meta?.['com.taskrouter/droppedMetadata']).toMatchObject({ droppedKeys: 9 });
  });

  it('keeps statusMessage and a null ttlMs', () => {
    const s = toSnapshot({ ...task, statusMessage: 'halfway', ttlMs: null }, bounds);
    expect(s?.statusMessage).toBe('halfway');
    expect(s?.ttlMs).toBeNull();
  });

  it('clamps the suggested poll interval and fills it in when absent', () => {
    expect(toSnapshot({ ...task, pollIntervalMs: 1 }, bounds)?.pollIntervalMs).toBe(500);
    const { pollIntervalMs: _p, ...noPoll } = task;
    expect(toSnapshot(noPoll, bounds)?.pollIntervalMs).toBe(1000);
  });

  it('input_required: keeps inputRequests', () => {
    const inputRequests = { login: { method: 'elicitation/create', params: { message: 'who?' } } };
    const s = toSnapshot(
      { ...task, resultType: 'complete', status: 'input_required', inputRequests },
      bounds,
    );
    expect(s?.status).toBe('input_required');
    expect(s?.inputRequests).toEqual(inputRequests);
    expect(s).not.toHaveProperty('result');
  });

  it('input_required without inputRequests (a CreateTaskResult): an empty set of requests', () => {
    const s = toSnapshot({ ...task, resultType: 'task', status: 'input_required' }, bounds);
    expect(s?.status).toBe('input_required');
    expect(s?.inputRequests).toEqual({});
  });

  it('completed: keeps the result, isError and nested _meta included', () => {
    const result = { resultType: 'complete', content: [], isError: true, _meta: { 'com.example/x': 1 } };
    const s = toSnapshot({ ...task, status: 'completed', result }, bounds);
    expect(s?.status).toBe('completed');
    expect(s?.result).toEqual(result);
    expect(s).not.toHaveProperty('error');
    expect(s).not.toHaveProperty('inputRequests');
  });

  it('failed: keeps the error', () => {
    const error = { code: -32603, message: 'API rate limit exceeded', data: { retry: 30 } };
    const s = toSnapshot({ ...task, status: 'failed', statusMessage: 'boom', error }, bounds);
    expect(s?.status).toBe('failed');
    expect(s?.error).toEqual(error);
    expect(s?.statusMessage).toBe('boom');
  });

  it('cancelled: no detail', () => {
    const s = toSnapshot({ ...task, status: 'cancelled', result: { content: [] } }, bounds);
    expect(s?.status).toBe('cancelled');
    expect(s).not.toHaveProperty('result');
  });

  it('working: ignores detail fields that belong to other statuses', () => {
    const s = toSnapshot({ ...task, inputRequests: { a: { method: 'elicitation/create' } } }, bounds);
    expect(s).not.toHaveProperty('inputRequests');
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['a string', 'working'],
    ['an array', [task]],
    ['no taskId', { ...task, taskId: undefined }],
    ['an empty taskId', { ...task, taskId: '' }],
    ['an unknown status', { ...task, status: 'running' }],
    ['no ttlMs', { ...task, ttlMs: undefined }],
    ['a negative ttlMs', { ...task, ttlMs: -1 }],
    ['a fractional pollIntervalMs', { ...task, pollIntervalMs: 1.5 }],
    ['no createdAt', { ...task, createdAt: undefined }],
    ['completed without a result', { ...task, status: 'completed' }],
    ['completed with a non-object result', { ...task, status: 'completed', result: 'done' }],
    ['failed without an error', { ...task, status: 'failed' }],
    ['failed with a malformed error', { ...task, status: 'failed', error: { message: 'no code' } }],
    [
      'input_required with malformed inputRequests',
      { ...task, status: 'input_required', inputRequests: 'x' },
    ],
  ])('rejects %s', (_label, input) => {
    expect(toSnapshot(input, bounds)).toBeUndefined();
  });
});

describe('status messages', () => {
  it('are cut to the bound where the task is observed, ending in …', () => {
    const s = toSnapshot(
      { ...task, statusMessage: 'm'.repeat(10_000) },
      { ...bounds, maxStatusMessageChars: 100 },
    );
    expect(s?.statusMessage).toBe(`${'m'.repeat(99)}…`);
  });

  it('are cut to streams.maxStatusMessageChars by default (4096), and kept when shorter', () => {
    expect(toSnapshot({ ...task, statusMessage: 'm'.repeat(10_000) }, bounds)?.statusMessage).toHaveLength(
      4096,
    );
    expect(toSnapshot({ ...task, statusMessage: 'half way' }, bounds)?.statusMessage).toBe('half way');
  });

  it('of a synchronous failure (the upstream error message) are cut too; the error itself is kept', () => {
    const error = { code: -32000, message: 'e'.repeat(10_000) };
    const s = finishedSnapshot({ kind: 'error', error, httpStatus: 200 }, { maxStatusMessageChars: 50 });
    expect(s.statusMessage).toBe(`${'e'.repeat(49)}…`);
    expect(s.error).toEqual(error);
  });
});
