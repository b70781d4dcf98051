/**
 * The activities' sleep (src/activities/support.ts): it waits its time, rejects with the signal's reason
 * (an activity's CancelledFailure) when cancelled, and leaves no listener on the signal once it settled,
 * so a watch that sleeps thousands of times holds no more than one that slept once.
 */
import { getEventListeners } from 'node:events';
import { CancelledFailure, Context } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { cancellableSleep } from '../../src/activities/sleep';
import { sleepWithHeartbeat } from '../../src/activities/support';

test('resolves after its time and leaves no listener behind', async () => {
  const abort = new AbortController();
  const started = performance.now();
  await cancellableSleep(30, abort.signal);
  expect(performance.now() - started).toBeGreaterThanOrEqual(25);
  expect(getEventListeners(abort.signal, 'abort')).toHaveLength(0);
});

test('a thousand sleeps leave no listener behind', async () => {
  const abort = new AbortController();
  for (let i = 0; i < 1000; i++) await cancellableSleep(0, abort.signal);
  expect(getEventListeners(abort.signal, 'abort')).toHaveLength(0);
});

test('rejects with the reason as soon as the signal aborts, and removes its listener', async () => {
  const abort = new AbortController();
  const reason = new CancelledFailure('CANCELLED');
  const sleeping = cancellableSleep(60_000, abort.signal);
  expect(getEventListeners(abort.signal, 'abort')).toHaveLength(1);
  abort.abort(reason);
  await expect(sleeping).rejects.toBe(reason);
  expect(getEventListeners(abort.signal, 'abort')).toHaveLength(0);
});

test('rejects at once on a signal already aborted', async () => {
  const abort = new AbortController();
  abort.abort(new CancelledFailure('CANCELLED'));
  await expect(cancellableSleep(60_000, abort.signal)).rejects.toBeInstanceOf(CancelledFailure);
});

test('an activity sleeping with heartbeats rejects with its CancelledFailure when cancelled', async () => {
  const env = new MockActivityEnvironment();
  const sleeping = env.run(() => sleepWithHeartbeat(60_000));
  setImmediate(() => env.cancel());
  await expect(sleeping).rejects.toBeInstanceOf(CancelledFailure);
});

test("an activity's sleeps leave nothing on its cancellation signal", async () => {
  const env = new MockActivityEnvironment();
  const listeners = { before: -1, after: -2 };
  await env.run(async () => {
    const signal = Context.current().cancellationSignal;
    listeners.before = getEventListeners(signal, 'abort').length;
    for (let i = 0; i < 200; i++) await sleepWithHeartbeat(1);
    listeners.after = getEventListeners(signal, 'abort').length;
  });
  expect(listeners.after).toBe(listeners.before);
});
