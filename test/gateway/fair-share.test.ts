/** The fair-share bookkeeping (src/gateway/fair-share.ts), with a clock of the test's own. */
import { FairShareConfigSchema } from '../../src/config/fair-share';
import { CONCURRENCY_RETRY_MS, FairShares, InFlight, TokenBuckets } from '../../src/gateway/fair-share';
import { ProtocolError } from '../../src/protocol';

function shares(over: Record<string, unknown> = {}) {
  let now = 1_000_000;
  const config = FairShareConfigSchema.parse(over);
  return {
    s: new FairShares(config, () => now),
    advance: (ms: number) => (now += ms),
  };
}

const a1 = { projectId: 'pA', callerId: 'user:1' };
const a2 = { projectId: 'pA', callerId: 'user:2' };
const b1 = { projectId: 'pB', callerId: 'user:1' };

function refusal(f: () => unknown): ProtocolError {
  try {
    f();
  } catch (err) {
    if (err instanceof ProtocolError) return err;
    throw err;
  }
  throw new Error('not refused');
}

test('defaults: each stated, and a project can never take every creation of a replica', () => {
  const c = FairShareConfigSchema.parse({});
  expect(c).toEqual({
    calls: { perCaller: 64, perProject: 128 },
    creations: {
      inFlightPerCaller: 16,
      inFlightPerProject: 32,
      inFlightTotal: 150,
      perSecondPerCaller: 20,
      burstPerCaller: 40,
      perSecondPerProject: 50,
      burstPerProject: 100,
    },
    hosted: { openPerProject: 500 },
  });
  expect(() => FairShareConfigSchema.parse({ creations: { inFlightPerProject: 150 } })).toThrow(
    /inFlightPerProject must be below/,
  );
});

test("hosted tasks: a project's open ones below the bound pass, at it refused with a 10 s retry delay", () => {
  const { s } = shares({ hosted: { openPerProject: 3 } });
  expect(s.openHostedPerProject).toBe(3);
  s.admitHostedTask(0);
  s.admitHostedTask(2);
  const err = refusal(() => s.admitHostedTask(3));
  expect(err.code).toBe(-31013);
  expect(err.data).toEqual({ retryAfterMs: 10_000, limit: 'fairShare.hosted.openPerProject' });
  expect(err.message).toMatch(/at most 3 hosted tasks of one project/);
});

test('calls: a caller over its share is refused with -31013 and a retry delay; others go on', () => {
  const { s } = shares({ calls: { perCaller: 2, perProject: 3 } });
  const l1 = s.admitCall(a1);
  s.admitCall(a1);
  const err = refusal(() => s.admitCall(a1));
  expect(err.kind).toBe('RateLimited');
  expect(err.code).toBe(-31013);
  expect(err.httpStatus).toBe(429);
  expect(err.data).toEqual({ retryAfterMs: CONCURRENCY_RETRY_MS, limit: 'fairShare.calls.perCaller' });
  expect(err.message).toMatch(/at most 2 requests of one caller/);
  // Another caller of the project has a share of its own, until the project's is full.
  s.admitCall(a2);
  expect(refusal(() => s.admitCall(a2)).data).toMatchObject({ limit: 'fairShare.calls.perProject' });
  // Another project is untouched.
  s.admitCall(b1);
  // A release frees the slot, once only.
  l1.release();
  l1.release();
  expect(s.inFlight(a1)).toMatchObject({ calls: 1, projectCalls: 2 });
  s.admitCall(a1);
  expect(() => s.admitCall(a1)).toThrow(ProtocolError);
});

test('a refused request takes nothing from any share', () => {
  const { s } = shares({ calls: { perCaller: 1, perProject: 10 } });
  s.admitCall(a1);
  for (let i = 0; i < 5; i++) expect(() => s.admitCall(a1)).toThrow(ProtocolError);
  expect(s.inFlight(a1)).toMatchObject({ calls: 1, projectCalls: 1 });

  const r = shares({
    creations: {
      perSecondPerCaller: 0.001,
      burstPerCaller: 1,
      inFlightPerCaller: 5,
      perSecondPerProject: 0.001,
      burstPerProject: 2,
    },
  });
  r.s.admitCreation(a1).release();
  for (let i = 0; i < 5; i++) expect(() => r.s.admitCreation(a1)).toThrow(ProtocolError);
  expect(r.s.inFlight(a1)).toMatchObject({ creations: 0, projectCreations: 0 });
  // The refusals took no token from the project's bucket either: its second token is still there.
  r.s.admitCreation(a2).release();
  expect(refusal(() => r.s.admitCreation({ projectId: 'pA', callerId: 'user:3' })).data).toMatchObject({
    limit: 'fairShare.creations.perSecondPerProject',
  });
});

test('creations in flight: per caller, per project, and per replica', () => {
  const { s } = shares({
    creations: { inFlightPerCaller: 2, inFlightPerProject: 3, inFlightTotal: 4 },
  });
  s.admitCreation(a1);
  s.admitCreation(a1);
  expect(refusal(() => s.admitCreation(a1)).data).toMatchObject({
    limit: 'fairShare.creations.inFlightPerCaller',
  });
  s.admitCreation(a2);
  expect(refusal(() => s.admitCreation(a2)).data).toMatchObject({
    limit: 'fairShare.creations.inFlightPerProject',
  });
  const held = s.admitCreation(b1);
  expect(refusal(() => s.admitCreation({ projectId: 'pC', callerId: 'x' })).data).toMatchObject({
    limit: 'fairShare.creations.inFlightTotal',
    retryAfterMs: CONCURRENCY_RETRY_MS,
  });
  held.release();
  s.admitCreation({ projectId: 'pC', callerId: 'x' });
});

test('creations per second: a burst, then the refill rate, with the wait until the next token', () => {
  const { s, advance } = shares({
    creations: { perSecondPerCaller: 2, burstPerCaller: 3, perSecondPerProject: 100, burstPerProject: 100 },
  });
  for (let i = 0; i < 3; i++) s.admitCreation(a1).release();
  const err = refusal(() => s.admitCreation(a1));
  expect(err.data).toEqual({ retryAfterMs: 500, limit: 'fairShare.creations.perSecondPerCaller' });
  advance(200);
  expect((refusal(() => s.admitCreation(a1)).data as { retryAfterMs: number }).retryAfterMs).toBe(300);
  advance(300);
  s.admitCreation(a1).release();
  expect(() => s.admitCreation(a1)).toThrow(ProtocolError);
  // Other callers and projects have buckets of their own.
  s.admitCreation(a2).release();
  s.admitCreation(b1).release();
});

test("creations per second: the project's bucket, all its callers together", () => {
  const { s } = shares({
    creations: { perSecondPerCaller: 100, burstPerCaller: 100, perSecondPerProject: 4, burstPerProject: 2 },
  });
  s.admitCreation(a1).release();
  s.admitCreation(a2).release();
  const err = refusal(() => s.admitCreation({ projectId: 'pA', callerId: 'user:3' }));
  expect(err.data).toEqual({ retryAfterMs: 250, limit: 'fairShare.creations.perSecondPerProject' });
  s.admitCreation(b1).release();
});

test('bookkeeping stays bounded: released keys are forgotten, refilled buckets swept', () => {
  const counts = new InFlight();
  counts.add('k');
  counts.add('k');
  counts.remove('k');
  counts.remove('k');
  expect(counts.size).toBe(0);

  let now = 0;
  const buckets = new TokenBuckets(10, 2, () => now, 100);
  for (let i = 0; i < 100; i++) buckets.take(`caller-${i}`);
  expect(buckets.size).toBe(100);
  now += 1_000; // every bucket is full again
  buckets.take('one-more');
  expect(buckets.size).toBe(1);
});
