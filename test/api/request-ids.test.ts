/** Request ids from the pooled random bytes: the same 16 hex digits as before, distinct across refills. */
import { newRequestId } from '../../src/api/mcp/request-ids';

test('request ids are 16 hex digits and distinct, across several refills of the pool', () => {
  const ids = Array.from({ length: 5000 }, () => newRequestId());
  for (const id of ids) expect(id).toMatch(/^[0-9a-f]{16}$/);
  expect(new Set(ids).size).toBe(ids.length);
});
