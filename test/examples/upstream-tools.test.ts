/**
 * The example upstream over real HTTP, every tool's life cycle for clients that do and do not declare the
 * tasks extension: synchronous answers, tasks that complete, fail, are cancelled or wait for input, and MRTR.
 */
import { TASKS_EXTENSION } from '../../src/protocol';
import type { Json } from './upstream-client';
import {
  call,
  errorOf,
  firstText,
  getTask,
  PLAIN_CAPS,
  resultOf,
  rpc,
  TASK_ID,
  upstreamFixture,
  waitFor,
} from './upstream-client';

describe.each(['json', 'sse'] as const)('example upstream (%s responses)', (responseMode) => {
  const fixture = upstreamFixture(responseMode);

  it('greets synchronously, even with a legacy task param', async () => {
    const result = resultOf(
      await call(fixture.url, 'greet', { name: 'World' }, {}, { task: { ttl: 60000 } }),
    );
    expect(result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'Hello, World!' }],
    });
    expect(result.taskId).toBeUndefined();
    expect(firstText(resultOf(await call(fixture.url, 'greet')))).toBe('Hello, World!');
  });

  it('runs slow_compute as a task for declaring clients', async () => {
    const created = resultOf(await call(fixture.url, 'slow_compute', { seconds: 0.2, label: 'lc' }));
    expect(created).toMatchObject({
      resultType: 'task',
      status: 'working',
      ttlMs: 3_600_000,
      pollIntervalMs: 100,
    });
    expect(created.taskId).toMatch(TASK_ID);
    for (const key of ['task', 'result', 'error', 'inputRequests', 'requestState', 'ttl', 'pollInterval']) {
      expect(created).not.toHaveProperty(key);
    }
    expect(Date.parse(String(created.createdAt))).not.toBeNaN();
    const taskId = String(created.taskId);

    const working = await getTask(fixture.url, taskId);
    expect(working).toMatchObject({ resultType: 'complete', taskId, status: 'working' });
    expect(working).not.toHaveProperty('result');

    const done = await waitFor(fixture.url, taskId, ['completed']);
    expect(firstText(done.result as Json)).toBe('Computed lc in 0.2s');
    expect(done).not.toHaveProperty('requestState');
    expect(fixture.upstream.stats.taskIds).toEqual([taskId]);
    expect(fixture.upstream.stats.toolCalls).toEqual({ slow_compute: 1 });
    expect(fixture.upstream.stats.tasksGet).toBeGreaterThanOrEqual(2);
  });

  it("suggests slow_compute's own poll interval when asked to (the cluster test's 2 s tasks)", async () => {
    const created = resultOf(await call(fixture.url, 'slow_compute', { seconds: 5, pollIntervalMs: 2000 }));
    expect(created).toMatchObject({ status: 'working', pollIntervalMs: 2000 });
    expect(await getTask(fixture.url, String(created.taskId))).toMatchObject({ pollIntervalMs: 2000 });
    const refused = await call(fixture.url, 'slow_compute', { seconds: 5, pollIntervalMs: 50 });
    expect(errorOf(refused)).toMatchObject({ code: -32602 });
  });

  it('computes slow_compute synchronously for non-declaring clients', async () => {
    const started = Date.now();
    const result = resultOf(
      await call(fixture.url, 'slow_compute', { seconds: 0.1, label: 'sync' }, { caps: {} }),
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(result).toMatchObject({ resultType: 'complete' });
    expect(firstText(result)).toBe('Computed sync in 0.1s');
    expect(fixture.upstream.stats.taskIds).toEqual([]);
  });

  it('cancels a running task and acks cancel on terminal tasks idempotently', async () => {
    const taskId = String(
      resultOf(await call(fixture.url, 'slow_compute', { seconds: 60, label: 'c' })).taskId,
    );
    const ack = resultOf(await rpc(fixture.url, 'tasks/cancel', { taskId }));
    expect(Object.keys(ack).sort()).toEqual(['_meta', 'resultType']);
    expect(ack.resultType).toBe('complete');
    expect(await getTask(fixture.url, taskId)).toMatchObject({ status: 'cancelled' });
    expect(resultOf(await rpc(fixture.url, 'tasks/cancel', { taskId })).resultType).toBe('complete');
    expect(await getTask(fixture.url, taskId)).toMatchObject({ status: 'cancelled' });
    expect(fixture.upstream.stats.tasksCancel).toBe(2);
  });

  it('completes failing_job with isError, and requires the extension', async () => {
    const taskId = String(resultOf(await call(fixture.url, 'failing_job')).taskId);
    const done = await waitFor(fixture.url, taskId, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    expect(done.result).toMatchObject({ isError: true });

    const res = await call(fixture.url, 'failing_job', {}, { caps: {} });
    expect(res.status).toBe(400);
    expect(errorOf(res)).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    });
  });

  it('fails protocol_error_job with an inlined JSON-RPC error', async () => {
    const taskId = String(resultOf(await call(fixture.url, 'protocol_error_job')).taskId);
    const done = await waitFor(fixture.url, taskId, ['completed', 'failed']);
    expect(done).toMatchObject({ resultType: 'complete', status: 'failed', error: { code: -32603 } });
    expect(typeof (done.error as Json).message).toBe('string');
    expect(typeof done.statusMessage).toBe('string');
    expect(done).not.toHaveProperty('result');

    expect(errorOf(await call(fixture.url, 'protocol_error_job', {}, { caps: {} })).code).toBe(-32603);
  });

  it('parks confirm_delete in input_required and completes after tasks/update', async () => {
    const created = resultOf(await call(fixture.url, 'confirm_delete', { filename: 'a.txt' }));
    expect(created.status).toBe('working');
    const taskId = String(created.taskId);
    const parked = await waitFor(fixture.url, taskId, ['input_required']);
    const requests = parked.inputRequests as Record<string, Json>;
    expect(Object.keys(requests)).toEqual(['confirm']);
    expect(requests.confirm).toMatchObject({
      method: 'elicitation/create',
      params: { mode: 'form', requestedSchema: { type: 'object', required: ['confirm'] } },
    });

    const ignored = resultOf(
      await rpc(fixture.url, 'tasks/update', { taskId, inputResponses: { nope: { x: 1 } } }),
    );
    expect(Object.keys(ignored).sort()).toEqual(['_meta', 'resultType']);
    expect((await getTask(fixture.url, taskId)).status).toBe('input_required');

    const inputResponses = { confirm: { action: 'accept', content: { confirm: true } } };
    expect(resultOf(await rpc(fixture.url, 'tasks/update', { taskId, inputResponses })).resultType).toBe(
      'complete',
    );
    const done = await waitFor(fixture.url, taskId, ['completed']);
    expect(firstText(done.result as Json)).toBe('Confirmed: deleted a.txt');
    expect(done).not.toHaveProperty('inputRequests');
    // Answered keys are ignored from now on.
    resultOf(await rpc(fixture.url, 'tasks/update', { taskId, inputResponses }));
    expect(fixture.upstream.stats.tasksUpdate).toBe(3);
  });

  it('reports a declined confirmation', async () => {
    const taskId = String(resultOf(await call(fixture.url, 'confirm_delete', { filename: 'b.txt' })).taskId);
    await waitFor(fixture.url, taskId, ['input_required']);
    resultOf(
      await rpc(fixture.url, 'tasks/update', { taskId, inputResponses: { confirm: { action: 'decline' } } }),
    );
    const done = await waitFor(fixture.url, taskId, ['completed']);
    expect(firstText(done.result as Json)).toBe('Declined: kept b.txt');
  });

  it('accepts partial answers to multi_input', async () => {
    const taskId = String(resultOf(await call(fixture.url, 'multi_input')).taskId);
    const parked = await waitFor(fixture.url, taskId, ['input_required']);
    expect(Object.keys(parked.inputRequests as Json)).toEqual(['first', 'second']);

    const first = { first: { action: 'accept', content: { name: 'A', confirm: true } } };
    resultOf(await rpc(fixture.url, 'tasks/update', { taskId, inputResponses: first }));
    const partial = await getTask(fixture.url, taskId);
    expect(partial.status).toBe('input_required');
    expect(Object.keys(partial.inputRequests as Json)).toEqual(['second']);

    const second = { second: { action: 'accept', content: { name: 'B' } } };
    resultOf(await rpc(fixture.url, 'tasks/update', { taskId, inputResponses: second }));
    const done = await waitFor(fixture.url, taskId, ['completed']);
    expect(firstText(done.result as Json)).toBe('Got A and B');
  });

  it('gathers user_name by MRTR, then runs test_tool_with_task as a task', async () => {
    const round1 = resultOf(await call(fixture.url, 'test_tool_with_task'));
    expect(round1.resultType).toBe('input_required');
    expect(round1).not.toHaveProperty('taskId');
    expect(Object.keys(round1.inputRequests as Json)).toEqual(['user_name']);

    const round2 = resultOf(
      await call(
        fixture.url,
        'test_tool_with_task',
        {},
        {},
        {
          inputResponses: { user_name: { action: 'accept', content: { name: 'Alice' } } },
          requestState: round1.requestState,
        },
      ),
    );
    expect(round2.resultType).toBe('task');
    expect(round2).not.toHaveProperty('requestState');
    expect(round2).not.toHaveProperty('inputRequests');
    const done = await waitFor(fixture.url, String(round2.taskId), ['completed']);
    expect(firstText(done.result as Json)).toContain('Alice');

    expect(errorOf(await call(fixture.url, 'test_tool_with_task', {}, { caps: PLAIN_CAPS })).code).toBe(
      -32021,
    );
  });

  it('serves confirm_delete and multi_input by MRTR for non-declaring clients', async () => {
    const round1 = resultOf(
      await call(fixture.url, 'confirm_delete', { filename: 'c.txt' }, { caps: PLAIN_CAPS }),
    );
    expect(round1.resultType).toBe('input_required');
    const confirm = { confirm: { action: 'accept', content: { confirm: true } } };
    const done = resultOf(
      await call(
        fixture.url,
        'confirm_delete',
        { filename: 'c.txt' },
        { caps: PLAIN_CAPS },
        { inputResponses: confirm },
      ),
    );
    expect(firstText(done)).toBe('Confirmed: deleted c.txt');

    // Answers may be spread over rounds; earlier ones travel in the signed requestState.
    const m1 = resultOf(await call(fixture.url, 'multi_input', {}, { caps: PLAIN_CAPS }));
    const m2 = resultOf(
      await call(
        fixture.url,
        'multi_input',
        {},
        { caps: PLAIN_CAPS },
        {
          inputResponses: { first: { action: 'accept', content: { name: 'X' } } },
          requestState: m1.requestState,
        },
      ),
    );
    expect(m2.resultType).toBe('input_required');
    expect(Object.keys(m2.inputRequests as Json)).toEqual(['second']);
    const m3 = resultOf(
      await call(
        fixture.url,
        'multi_input',
        {},
        { caps: PLAIN_CAPS },
        {
          inputResponses: { second: { action: 'accept', content: { name: 'Y' } } },
          requestState: m2.requestState,
        },
      ),
    );
    expect(firstText(m3)).toBe('Got X and Y');

    const tampered = await call(
      fixture.url,
      'multi_input',
      {},
      { caps: PLAIN_CAPS },
      { requestState: 'e30.forged' },
    );
    expect(errorOf(tampered).code).toBe(-32602);
    expect(errorOf(await call(fixture.url, 'confirm_delete', { filename: 'c.txt' }, { caps: {} })).code).toBe(
      -32021,
    );
  });
});
