import type { TaskSnapshot } from '../../../src/protocol';
import { META } from '../../../src/protocol';
import { processToolResult } from '../../../src/gateway/responses/answer-preparation';
import { createTaskResult, getTaskResult, withGatewayMeta } from '../../../src/gateway/responses/responses';

const gateway = { name: 'taskrouter', version: '0.1.0' };

const base: TaskSnapshot = {
  status: 'working',
  statusMessage: 'busy',
  createdAt: '2026-07-28T10:30:00Z',
  lastUpdatedAt: '2026-07-28T10:31:00Z',
  ttlMs: 3_600_000,
  pollIntervalMs: 2000,
};

describe('withGatewayMeta', () => {
  it('replaces serverInfo, keeps other _meta keys and removes the legacy related-task key', () => {
    const upstreamResult = {
      resultType: 'complete',
      content: [{ type: 'text', text: 'hi' }],
      _meta: {
        [META.serverInfo]: { name: 'upstream', version: '9' },
        [META.legacyRelatedTask]: { taskId: 'upstream-task' },
        traceparent: '00-abc-def-01',
        'com.example/x': { y: 1 },
      },
    };
    const out = withGatewayMeta(upstreamResult, gateway);
    expect(out._meta).toEqual({
      [META.serverInfo]: gateway,
      traceparent: '00-abc-def-01',
      'com.example/x': { y: 1 },
    });
    expect(out._meta).not.toHaveProperty([META.legacyRelatedTask]);
    expect(out.content).toBe(upstreamResult.content);
    expect(out.resultType).toBe('complete');
  });

  it('adds _meta when the result has none', () => {
    expect(withGatewayMeta({ resultType: 'complete' }, gateway)).toEqual({
      resultType: 'complete',
      _meta: { [META.serverInfo]: gateway },
    });
  });

  it('does not mutate the input', () => {
    const meta = { [META.serverInfo]: { name: 'u', version: '1' }, [META.legacyRelatedTask]: {} };
    const input = { resultType: 'complete', _meta: meta };
    withGatewayMeta(input, gateway);
    expect(input._meta).toBe(meta);
    expect(Object.keys(meta)).toEqual([META.serverInfo, META.legacyRelatedTask]);
    expect(meta[META.serverInfo]).toEqual({ name: 'u', version: '1' });
  });
});

describe('createTaskResult', () => {
  it('is a flat CreateTaskResult under the gateway task id', () => {
    const out = createTaskResult('gw-1', base, gateway);
    expect(out).toEqual({
      resultType: 'task',
      taskId: 'gw-1',
      status: 'working',
      statusMessage: 'busy',
      createdAt: base.createdAt,
      lastUpdatedAt: base.lastUpdatedAt,
      ttlMs: 3_600_000,
      pollIntervalMs: 2000,
      _meta: { [META.serverInfo]: gateway },
    });
  });

  it('never carries result, error or inputRequests, whatever the snapshot holds', () => {
    const snapshots: TaskSnapshot[] = [
      { ...base, status: 'input_required', inputRequests: { a: { method: 'elicitation/create' } } },
      { ...base, status: 'completed', result: { content: [] } },
      { ...base, status: 'failed', error: { code: -32603, message: 'x' } },
    ];
    for (const s of snapshots) {
      const out = createTaskResult('gw-1', s, gateway);
      expect(out).not.toHaveProperty('result');
      expect(out).not.toHaveProperty('error');
      expect(out).not.toHaveProperty('inputRequests');
      expect(out.status).toBe(s.status);
    }
  });

  it('omits absent optional fields and keeps a null ttlMs', () => {
    const out = createTaskResult(
      'gw-1',
      { status: 'working', createdAt: 'c', lastUpdatedAt: 'l', ttlMs: null },
      gateway,
    );
    expect(out.ttlMs).toBeNull();
    expect(out).not.toHaveProperty('statusMessage');
    expect(out).not.toHaveProperty('pollIntervalMs');
  });
});

describe('getTaskResult', () => {
  it('working: the task fields only, resultType "complete"', () => {
    const out = getTaskResult('gw-1', base, gateway);
    expect(out.resultType).toBe('complete');
    expect(out.taskId).toBe('gw-1');
    expect(out.status).toBe('working');
    expect(out).toHaveProperty('_meta', { [META.serverInfo]: gateway });
    expect(out).not.toHaveProperty('result');
    expect(out).not.toHaveProperty('error');
    expect(out).not.toHaveProperty('inputRequests');
  });

  it('input_required: inlines inputRequests', () => {
    const inputRequests = { login: { method: 'elicitation/create', params: { message: 'who?' } } };
    const out = getTaskResult('gw-1', { ...base, status: 'input_required', inputRequests }, gateway);
    expect(out.resultType).toBe('complete');
    expect(out).toHaveProperty('inputRequests', inputRequests);
  });

  it('input_required without requests: an empty inputRequests object', () => {
    const out = getTaskResult('gw-1', { ...base, status: 'input_required' }, gateway);
    expect(out).toHaveProperty('inputRequests', {});
  });

  it('completed: inlines the original result, isError included', () => {
    const result = { resultType: 'complete', content: [{ type: 'text', text: 'x' }], isError: true };
    const out = getTaskResult('gw-1', { ...base, status: 'completed', result }, gateway);
    expect(out.resultType).toBe('complete');
    expect(out.status).toBe('completed');
    expect(out).toHaveProperty('result', result);
    expect(out).not.toHaveProperty('error');
  });

  it('failed: inlines the error, or a -32603 built from statusMessage', () => {
    const error = { code: -32000, message: 'rate limited', data: { retry: 1 } };
    expect(getTaskResult('gw-1', { ...base, status: 'failed', error }, gateway)).toHaveProperty(
      'error',
      error,
    );
    expect(getTaskResult('gw-1', { ...base, status: 'failed' }, gateway)).toHaveProperty('error', {
      code: -32603,
      message: 'busy',
    });
    const { statusMessage: _m, ...noMessage } = base;
    expect(getTaskResult('gw-1', { ...noMessage, status: 'failed' }, gateway)).toHaveProperty('error', {
      code: -32603,
      message: 'Task failed',
    });
  });

  it('cancelled: no detail', () => {
    const out = getTaskResult('gw-1', { ...base, status: 'cancelled' }, gateway);
    expect(out.status).toBe('cancelled');
    expect(out.resultType).toBe('complete');
    expect(Object.keys(out).sort()).toEqual(
      [
        '_meta',
        'createdAt',
        'lastUpdatedAt',
        'pollIntervalMs',
        'resultType',
        'status',
        'statusMessage',
        'taskId',
        'ttlMs',
      ].sort(),
    );
  });

  it('only adds the detail that belongs to the status', () => {
    const out = getTaskResult(
      'gw-1',
      { ...base, status: 'working', result: { content: [] }, error: { code: 1, message: 'm' } },
      gateway,
    );
    expect(out).not.toHaveProperty('result');
    expect(out).not.toHaveProperty('error');
  });
});

describe('processToolResult (every tools/call result the gateway sends)', () => {
  const limits = { maxResultBytes: 1_000_000, overflow: 'error' as const };

  it('gives a result without resultType "complete" (a free-form task result) and names the gateway', () => {
    const out = processToolResult(
      { content: [{ type: 'text', text: 'done' }], _meta: { [META.serverInfo]: { name: 'upstream' } } },
      limits,
      gateway,
    );
    expect(out).toEqual({
      resultType: 'complete',
      content: [{ type: 'text', text: 'done' }],
      _meta: { [META.serverInfo]: gateway },
    });
  });

  it("keeps the result's own resultType", () => {
    const out = processToolResult({ resultType: 'input_required', inputRequests: {} }, limits, gateway);
    expect(out.resultType).toBe('input_required');
  });
});
