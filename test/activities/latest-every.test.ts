/**
 * The hosted call's progress writer: at most one write an interval, never losing the latest report, and
 * nothing written once it is stopped or while the call asks a question.
 */
import { latestEvery } from '../../src/activities/latest-every';

beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
afterEach(() => jest.useRealTimers());

/** A writer that records what it wrote and when; each write takes `takesMs`. */
function recorder(takesMs = 0) {
  const written: { value: string; at: number }[] = [];
  const write = async (value: string) => {
    if (takesMs > 0) await new Promise((r) => setTimeout(r, takesMs));
    written.push({ value, at: Date.now() });
  };
  return { written, write };
}

test('the first report is written at once, and the last of a burst at the interval’s end', async () => {
  const { written, write } = recorder();
  const progress = latestEvery(1000, write);
  progress.offer('1/4');
  await jest.advanceTimersByTimeAsync(0);
  progress.offer('2/4');
  await jest.advanceTimersByTimeAsync(300);
  progress.offer('3/4');
  await jest.advanceTimersByTimeAsync(2000);
  expect(written).toEqual([
    { value: '1/4', at: 1_000_000 },
    { value: '3/4', at: 1_001_000 },
  ]);
});

test('a report just under the interval after the previous one is written late, not dropped', async () => {
  const { written, write } = recorder();
  const progress = latestEvery(1000, write);
  progress.offer('1/2');
  await jest.advanceTimersByTimeAsync(999);
  progress.offer('2/2');
  // The upstream then stays quiet for a long time: its last report must show meanwhile.
  await jest.advanceTimersByTimeAsync(60_000);
  expect(written.map((w) => w.value)).toEqual(['1/2', '2/2']);
  expect(written[1]?.at).toBe(1_001_000);
});

test('writes never overlap, and stop waits for the one under way and drops what waits', async () => {
  const { written, write } = recorder(1500);
  const progress = latestEvery(1000, write);
  progress.offer('a');
  await jest.advanceTimersByTimeAsync(1000);
  progress.offer('b');
  await jest.advanceTimersByTimeAsync(0);
  // 'a' still being written (1,500 ms); 'b' starts only after it.
  expect(written).toEqual([]);
  await jest.advanceTimersByTimeAsync(600);
  expect(written.map((w) => w.value)).toEqual(['a']);
  progress.offer('c');
  let stopped = false;
  const stopping = progress.stop().then(() => (stopped = true));
  await jest.advanceTimersByTimeAsync(100);
  expect(stopped).toBe(false);
  await jest.advanceTimersByTimeAsync(2000);
  await stopping;
  expect(written.map((w) => w.value)).toEqual(['a', 'b']);
  progress.offer('d');
  await jest.advanceTimersByTimeAsync(5000);
  expect(written.map((w) => w.value)).toEqual(['a', 'b']);
});

test('a store slower than the interval builds no queue: one write at a time, the newest next, stop waits for one', async () => {
  let running = 0;
  let most = 0;
  const written: string[] = [];
  const progress = latestEvery(1000, async (value: string) => {
    running += 1;
    most = Math.max(most, running);
    await new Promise((r) => setTimeout(r, 2500));
    running -= 1;
    written.push(value);
  });
  // A report every 100 ms for 10 s, each write taking 2.5 s.
  for (let i = 1; i <= 100; i++) {
    progress.offer(`${i}/100`);
    await jest.advanceTimersByTimeAsync(100);
  }
  expect(most).toBe(1);
  expect(written.length).toBeLessThanOrEqual(4);
  // Each write after the first took the newest report of its time, not the next in line.
  expect(written.slice(1).every((v) => Number(v.split('/')[0]) > 20)).toBe(true);
  let stopped = false;
  const stopping = progress.stop().then(() => (stopped = true));
  await jest.advanceTimersByTimeAsync(2500);
  await stopping;
  expect(stopped).toBe(true);
  const atStop = written.length;
  await jest.advanceTimersByTimeAsync(10_000);
  expect(written).toHaveLength(atStop);
  expect(most).toBe(1);
});

test('nothing is written while quiet; reports resume after', async () => {
  const { written, write } = recorder();
  const progress = latestEvery(1000, write);
  progress.offer('before');
  await jest.advanceTimersByTimeAsync(500);
  progress.offer('waiting');
  const asked = progress.quiet(async () => {
    progress.offer('during');
    await new Promise((r) => setTimeout(r, 5000));
    return 'answer';
  });
  await jest.advanceTimersByTimeAsync(5000);
  await expect(asked).resolves.toBe('answer');
  expect(written.map((w) => w.value)).toEqual(['before']);
  progress.offer('after');
  await jest.advanceTimersByTimeAsync(0);
  expect(written.map((w) => w.value)).toEqual(['before', 'after']);
});

test('a failed write does not stop the later ones', async () => {
  const written: string[] = [];
  const progress = latestEvery(0, async (value: string) => {
    if (value === 'bad') throw new Error('store busy');
    written.push(value);
  });
  progress.offer('bad');
  progress.offer('good');
  await jest.advanceTimersByTimeAsync(0);
  await progress.stop();
  expect(written).toEqual(['good']);
});
