import { ordinaryAnswer, progressMessage } from '../../src/activities/hosted-answer';

describe('a hosted call answer', () => {
  it('relays a result, an isError result and an error as they are', () => {
    const ok = { kind: 'result' as const, result: { content: [], resultType: 'complete' } };
    const isError = { kind: 'result' as const, result: { content: [], isError: true } };
    const error = { kind: 'error' as const, error: { code: -32602, message: 'bad' }, httpStatus: 200 };
    expect(ordinaryAnswer('up', ok)).toBe(ok);
    expect(ordinaryAnswer('up', isError)).toBe(isError);
    expect(ordinaryAnswer('up', error)).toBe(error);
  });

  it('ends the call with an error when the upstream asks for input or answers with a task', () => {
    const asking = ordinaryAnswer('up', { kind: 'result', result: { resultType: 'input_required' } });
    expect(asking).toMatchObject({ kind: 'error', error: { code: -32603 } });
    expect(JSON.stringify(asking)).toContain('asked for input during a hosted call');
    const task = ordinaryAnswer('up', { kind: 'result', result: { resultType: 'task', taskId: 't' } });
    expect(JSON.stringify(task)).toContain('with a task of its own');
  });
});

describe('hosted progress text', () => {
  it.each([
    [{ progress: 3, total: 10, message: 'Indexing' }, undefined, 'Indexing (3/10)'],
    [{ progress: 3 }, undefined, 'Working (3)'],
    [{ message: 'Almost' }, undefined, 'Almost'],
    [{ progress: 1, total: 2 }, 'sent again', 'Working (1/2) [sent again]'],
    [undefined, undefined, 'Working'],
  ])('%j -> %s', (params, note, text) => {
    expect(progressMessage(params, note)).toBe(text);
  });
});
