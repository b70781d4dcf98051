/**
 * One warning per key and window (src/telemetry/warn-throttle.ts): a failure repeated for many tasks at
 * once is logged once, then counted into the next warning of its key; other keys are logged as they come.
 */
import pino from 'pino';
import { WarnThrottle } from '../../src/telemetry/warn-throttle';

function captured(): { logger: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

test('logs the first failure of a key, counts the rest of its window, and reports them with the next', async () => {
  const { logger, lines } = captured();
  const throttle = new WarnThrottle(logger, 50);
  for (let i = 0; i < 100; i++) throttle.warn('store', { task: i }, 'round failed');
  throttle.warn('upstream', { task: 'u' }, 'poll failed');
  expect(lines.map((l) => [l.msg, l.task, l.alsoFailed])).toEqual([
    ['round failed', 0, undefined],
    ['poll failed', 'u', undefined],
  ]);
  await new Promise((r) => setTimeout(r, 60));
  throttle.warn('store', { task: 100 }, 'round failed');
  expect(lines.slice(2).map((l) => [l.msg, l.task, l.alsoFailed])).toEqual([['round failed', 100, 99]]);
  // A new window: the count starts again.
  throttle.warn('store', { task: 101 }, 'round failed');
  expect(lines).toHaveLength(3);
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
