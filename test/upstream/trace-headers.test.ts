/**
 * Which trace keys of a client's `_meta` may become upstream request headers when the gateway does not
 * trace (src/telemetry/mcp-spans.ts): only well-formed W3C values, never anything that could smuggle a
 * header line or break the request.
 */
import { traceCarrierOf } from '../../src/telemetry/mcp-spans';

const GOOD = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

test('well-formed keys are kept', () => {
  expect(traceCarrierOf({ traceparent: GOOD, tracestate: 'a=1,b=2', baggage: 'k=v', other: 'x' })).toEqual({
    traceparent: GOOD,
    tracestate: 'a=1,b=2',
    baggage: 'k=v',
  });
});

test.each([
  ['not the W3C shape', 'not-a-trace'],
  ['upper-case hex', GOOD.toUpperCase()],
  ['version ff', `ff${GOOD.slice(2)}`],
  ['an all-zero trace id', `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`],
  ['an all-zero parent id', `00-4bf92f3577b34da6a3ce929d0e0e4736-${'0'.repeat(16)}-01`],
  ['a line break', `${GOOD}\r\nx-injected: 1`],
  ['not a string', 42],
])('a traceparent with %s is dropped, and its tracestate with it', (_case, traceparent) => {
  expect(traceCarrierOf({ traceparent, tracestate: 'a=1', baggage: 'k=v' })).toEqual({ baggage: 'k=v' });
});

test('values with control characters, non-ASCII or past the W3C sizes are dropped', () => {
  expect(traceCarrierOf({ traceparent: GOOD, tracestate: 'a=1\nb=2' })).toEqual({ traceparent: GOOD });
  expect(traceCarrierOf({ traceparent: GOOD, baggage: 'k=välue' })).toEqual({ traceparent: GOOD });
  expect(traceCarrierOf({ traceparent: GOOD, baggage: `k=${'v'.repeat(8192)}` })).toEqual({
    traceparent: GOOD,
  });
  expect(traceCarrierOf(undefined)).toEqual({});
});
