/**
 * What a first call's failure says when its send may have been delivered (src/activities/upstream-send.ts):
 * a tool that is not idempotent is not repeated, and says why; an idempotent one is repeated until the
 * retries run out, and then says that instead (not "not idempotent"). Pure logic: the send is a stand-in
 * that fails as the upstream client does.
 */
import { ApplicationFailure } from '@temporalio/common';
import { CONNECT_RETRY_DELAYS_MS, sendRetryingUndelivered } from '../../src/activities/upstream-send';
import { UpstreamTransportError } from '../../src/upstream/errors';

async function failureOf(repeatDelivered: boolean): Promise<{ failure: ApplicationFailure; sends: number }> {
  let sends = 0;
  const send = () => {
    sends++;
    return Promise.reject(new UpstreamTransportError('socket hang up', true));
  };
  try {
    await sendRetryingUndelivered(send, {
      upstream: 'demo',
      repeatDelivered,
      notRepeatedBecause: 'because the tool is not idempotent',
      sleep: () => Promise.resolve(),
    });
  } catch (err) {
    if (err instanceof ApplicationFailure) return { failure: err, sends };
    throw err;
  }
  throw new Error('the send did not fail');
}

test('a call that may have been delivered, of a tool that is not idempotent: sent once, and it says why', async () => {
  const { failure, sends } = await failureOf(false);
  expect(sends).toBe(1);
  expect(failure.nonRetryable).toBe(true);
  expect(failure.message).toBe(
    'The call to upstream "demo" failed after it may have been delivered; it was not repeated because the tool is not idempotent',
  );
});

test('an idempotent call that may have been delivered: repeated until the retries run out, and it says so', async () => {
  const { failure, sends } = await failureOf(true);
  const attempts = CONNECT_RETRY_DELAYS_MS.length + 1;
  expect(sends).toBe(attempts);
  expect(failure.message).toBe(
    `The call to upstream "demo" failed ${attempts} times, the last time after it may have been delivered; it was not tried again`,
  );
  expect(failure.message).not.toMatch(/idempotent/);
});
