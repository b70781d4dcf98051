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
