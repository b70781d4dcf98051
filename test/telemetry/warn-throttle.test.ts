/**
 * One warning per key and window (src/telemetry/warn-throttle.ts): a failure repeated for many tasks at
 * once is logged once, then counted and reported when its window ends; other keys are logged as they come.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import pino from 'pino';
import { WarnThrottle } from '../../src/telemetry/warn-throttle';

function captured(): { logger: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('logs the first failure of a key, counts the rest of its window, and reports them when it ends', async () => {
  const { logger, lines } = captured();
  const throttle = new WarnThrottle(logger, 50);
  for (let i = 0; i < 100; i++) throttle.warn('store', { task: i }, 'round failed');
  throttle.warn('upstream', { task: 'u' }, 'poll failed');
  expect(lines.map((l) => [l.msg, l.task, l.alsoFailed])).toEqual([
    ['round failed', 0, undefined],
    ['poll failed', 'u', undefined],
  ]);
  // The failures stopped: the window's end reports the held-back ones all the same (the last of them).
  await wait(120);
  expect(lines.slice(2).map((l) => [l.msg, l.task, l.alsoFailed])).toEqual([['round failed', 99, 99]]);
  // That report opened a window of its own, now over with nothing held back: the next is logged at once.
  throttle.warn('store', { task: 100 }, 'round failed');
  expect(lines.slice(3).map((l) => [l.msg, l.task, l.alsoFailed])).toEqual([
    ['round failed', 100, undefined],
  ]);
});

test('a failure that goes on is logged once per window, each line counting the ones held back', async () => {
  const { logger, lines } = captured();
  const throttle = new WarnThrottle(logger, 40);
  const started = Date.now();
  let failures = 0;
  while (Date.now() - started < 150) {
    throttle.warn('store', { task: failures++ }, 'round failed');
    await wait(1);
  }
  await wait(100); // the last window's report
  // Each window (at least 40 ms, opened by a line) holds one line at most: not one line per failure.
  expect(lines.length).toBeGreaterThanOrEqual(3);
  expect(lines.length).toBeLessThanOrEqual(Math.floor((Date.now() - started) / 40) + 1);
  // Every failure is in a line: logged itself, or counted in `alsoFailed` (a window that ended just before
  // a failure, with its report yet to run, is counted in that failure's line, which is itself one more).
  const inLines = lines.reduce((n, l) => n + (typeof l.alsoFailed === 'number' ? l.alsoFailed : 1), 0);
  expect(inLines).toBeLessThanOrEqual(failures);
  expect(inLines).toBeGreaterThanOrEqual(failures - lines.length);
});

test("a window's report is logged in the throttle's context, not in that of the failure that scheduled it", async () => {
  // As the log's trace ids are: read from the async context the line is written in.
  const trace = new AsyncLocalStorage<string>();
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: 'warn', mixin: () => ({ traceId: trace.getStore() }) },
    { write: (line: string) => lines.push(JSON.parse(line)) },
  );
  const throttle = new WarnThrottle(logger, 30);
  trace.run('first', () => throttle.warn('a', {}, 'failed'));
  trace.run('second', () => throttle.warn('a', {}, 'failed'));
  await wait(80);
  expect(lines.map((l) => [l.traceId, l.alsoFailed])).toEqual([
    ['first', undefined],
    [undefined, 1],
  ]);
});

test('remembers at most 1,000 keys: past that the oldest is forgotten, so it warns again', () => {
  const { logger, lines } = captured();
  const throttle = new WarnThrottle(logger, 60_000);
  for (let i = 0; i <= 1000; i++) throttle.warn(`upstream-${i}`, {}, 'poll failed');
  expect(lines).toHaveLength(1001);
  throttle.warn('upstream-1', {}, 'poll failed'); // still remembered: held back
  throttle.warn('upstream-0', {}, 'poll failed'); // the oldest, forgotten: logged
  expect(lines).toHaveLength(1002);
});
