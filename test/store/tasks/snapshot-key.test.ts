import { snapshotKey } from '../../../src/store/tasks/snapshot-key';

const elicit = (message: string) => ({ method: 'elicitation/create', params: { mode: 'form', message } });

describe('snapshotKey', () => {
  it('does not depend on the order of input request keys', () => {
    const a = snapshotKey({ status: 'input_required', inputRequests: { a: elicit('A'), b: elicit('B') } });
    const b = snapshotKey({ status: 'input_required', inputRequests: { b: elicit('B'), a: elicit('A') } });
    expect(a).toBe(b);
  });

  it('treats a missing statusMessage and missing inputRequests as absent', () => {
    expect(snapshotKey({ status: 'working' })).toBe(
      snapshotKey({ status: 'working', statusMessage: undefined, inputRequests: {} }),
    );
  });

  it.each<[string, Parameters<typeof snapshotKey>[0]]>([
    ['status', { status: 'completed', statusMessage: 'm', inputRequests: { a: elicit('A') } }],
    [
      'statusMessage',
      { status: 'input_required', statusMessage: 'other', inputRequests: { a: elicit('A') } },
    ],
    ['no statusMessage', { status: 'input_required', inputRequests: { a: elicit('A') } }],
    ['the set of keys', { status: 'input_required', statusMessage: 'm', inputRequests: { b: elicit('A') } }],
  ])('changes with %s', (_label, other) => {
    const key = snapshotKey({
      status: 'input_required',
      statusMessage: 'm',
      inputRequests: { a: elicit('A') },
    });
    expect(snapshotKey(other)).not.toBe(key);
  });

  it('is not fooled by a status message that looks like JSON', () => {
    expect(snapshotKey({ status: 'working', statusMessage: 'null' })).not.toBe(
      snapshotKey({ status: 'working' }),
    );
  });
});
