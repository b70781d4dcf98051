/**
 * The upstream task id scrub (activities/task-metadata.ts), run on every poll's answer: every occurrence,
 * in strings, object keys, arrays and nested objects, becomes the placeholder; what holds none is returned
 * as it is (not copied), and the input is never changed.
 */
import { scrubId } from '../../src/activities/task-metadata';
import { TASK_ID_PLACEHOLDER } from '../../src/protocol';

const ID = 'up-7f3a';

test('replaces the id wherever it occurs, and leaves the input unchanged', () => {
  const input = {
    taskId: ID,
    statusMessage: `task ${ID} of ${ID}`,
    list: ['a', `x${ID}`, 3, null],
    nested: { [`key-${ID}`]: { deep: ID }, untouched: { n: 1 } },
  };
  const before = JSON.stringify(input);
  const out = scrubId(input, ID);
  expect(JSON.stringify(out)).not.toContain(ID);
  expect(out).toEqual({
    taskId: TASK_ID_PLACEHOLDER,
    statusMessage: `task ${TASK_ID_PLACEHOLDER} of ${TASK_ID_PLACEHOLDER}`,
    list: ['a', `x${TASK_ID_PLACEHOLDER}`, 3, null],
    nested: { [`key-${TASK_ID_PLACEHOLDER}`]: { deep: TASK_ID_PLACEHOLDER }, untouched: { n: 1 } },
  });
  expect(JSON.stringify(input)).toBe(before);
  // A part that held no occurrence is the same object, not a copy.
  expect(out.nested.untouched).toBe(input.nested.untouched);
});

test('an answer without the id is returned as it is; an empty id scrubs nothing', () => {
  const input = { status: 'working', list: [{ a: 'b' }], meta: { k: 'v' } };
  expect(scrubId(input, ID)).toBe(input);
  expect(scrubId({ s: 'x' }, '')).toEqual({ s: 'x' });
});
