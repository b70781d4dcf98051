/**
 * How a watch hub schedules its polls (src/temporal/watch-hub.ts): every task it holds is polled, the
 * longest overdue first, however many are due at once (a hub at its poll cap never starves the tasks it
 * claimed last); and polls that run late are marked due in the store until they catch up, so tasks/get
 * does not present their status as current; a poll's slot is its upstream's only while the upstream is
 * asked. The store and the poll are stand-ins recording the calls:
 * the hub's scheduling is under test (test/integration/watch-hub.test.ts runs the real thing).
 */
import pino from 'pino';
import type { PollStep } from '../../src/activities/watch-poll';
import type { WatchHubDeps } from '../../src/temporal/watch-hub';
import { WatchHub } from '../../src/temporal/watch-hub';
import { CREATED_ENLISTMENT } from '../../src/workflows/messages';

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`never: ${what}`);
}

const rowOf = (taskKey: string, pollIntervalMs: number) => ({
  taskKey,
  workflowId: `wf-${taskKey}`,
  project: 'p',
  upstream: 'u',
  generation: 'run/1',
  watch: { taskKey, pollIntervalMs },
  pollIntervalMs,
  leaseUntil: '',
});

interface Recorded {
  marked: string[];
  cleared: string[];
}

function startHub(opts: {
  rows: ReturnType<typeof rowOf>[];
  pollOnce: (taskKey: string) => Promise<PollStep>;
  maxPollsPerUpstream: number;
  leaseMs?: number;
  signal?: (workflowId: string) => Promise<'sent' | 'gone'>;
  retryMs?: number;
  logger?: pino.Logger;
}): { hub: WatchHub; recorded: Recorded } {
  const recorded: Recorded = { marked: [], cleared: [] };
  let claimed = false;
  const store = {
    claim: () => {
      if (claimed) return Promise.resolve([]);
      claimed = true;
      return Promise.resolve(opts.rows);
    },
    renew: () => Promise.resolve(opts.rows.map((r) => ({ taskKey: r.taskKey, generation: r.generation }))),
    release: () => Promise.resolve(0),
    remove: () => Promise.resolve(),
    markDue: (keys: string[]) => {
      recorded.marked.push(...keys);
      return Promise.resolve();
    },
    markAnswered: (key: string) => {
      recorded.marked.push(key);
      return Promise.resolve();
    },
    clearDue: (keys: string[]) => {
      recorded.cleared.push(...keys);
      return Promise.resolve();
    },
  };
  const hub = new WatchHub({
    store: store as unknown as WatchHubDeps['store'],
    poll: {
      startCursor: () => Promise.resolve({}),
      pollOnce: (input: { taskKey: string }) => opts.pollOnce(input.taskKey),
    },
    signal: opts.signal ?? (() => Promise.resolve('sent')),
    settings: {
      maxTasks: 1000,
      maxPolls: 100,
      maxPollsPerUpstream: opts.maxPollsPerUpstream,
      leaseMs: opts.leaseMs ?? 1500,
      claimEveryMs: 20,
      claimBatch: 1000,
      ...(opts.retryMs !== undefined && { retryMs: opts.retryMs }),
    },
    logger: opts.logger ?? pino({ level: 'silent' }),
  } as unknown as WatchHubDeps);
  hub.start();
  return { hub, recorded };
}

test('tasks always due again are all polled in turn: the first ones claimed never starve the rest', async () => {
  const rows = Array.from({ length: 20 }, (_, i) => rowOf(`t${i}`, 1000));
  const polled = new Map<string, number>();
  const { hub } = startHub({
    rows,
    // Due again at once: the hub is always at its cap of 2 polls for this upstream.
    pollOnce: async (taskKey) => {
      polled.set(taskKey, (polled.get(taskKey) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, 2));
      return { againMs: 0, failed: false };
    },
    maxPollsPerUpstream: 2,
  });
  try {
    await until(() => rows.every((r) => (polled.get(r.taskKey) ?? 0) >= 3), 'every task polled three times');
    const counts = [...polled.values()];
    // The longest overdue goes first: no task gets far ahead of another.
    expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(2);
  } finally {
    await hub.stop({ release: false });
  }
});

test('a held task whose poll runs two intervals late is marked due in the store, and cleared once polled', async () => {
  const rows = [rowOf('slow', 1000), rowOf('waiting', 1000)];
  let release: (() => void) | undefined;
  let waitingPolls = 0;
  const { hub, recorded } = startHub({
    rows,
    // The one poll slot is taken by `slow`, whose upstream does not answer until released.
    pollOnce: async (taskKey) => {
      if (taskKey === 'slow' && release === undefined) await new Promise<void>((r) => (release = r));
      if (taskKey === 'waiting') waitingPolls++;
      return { againMs: 60_000, failed: false };
    },
    maxPollsPerUpstream: 1,
  });
  try {
    await until(() => release !== undefined, 'the slow poll under way');
    expect(hub.behind).toBe(false);
    await until(() => recorded.marked.includes('waiting'), '`waiting` marked due after 2 s');
    expect(waitingPolls).toBe(0);
    expect(hub.behind).toBe(true);
    expect(hub.overdue()[0]?.lateMs).toBeGreaterThan(2000);
    // Being polled, `slow` is not late: only the one nobody polls is marked.
    expect(recorded.marked).toEqual(['waiting']);
    release?.();
    await until(() => waitingPolls === 1, '`waiting` polled once the slot frees');
    await until(() => recorded.cleared.includes('waiting'), 'its mark cleared at the next renewal');
    expect(hub.behind).toBe(false);
  } finally {
    release?.();
    await hub.stop({ release: false });
  }
});

test("a poll that found a change gives its upstream's slot back while it signals the workflow", async () => {
  const rows = [rowOf('ends', 1000), rowOf('other', 1000)];
  let signalled: (() => void) | undefined;
  let otherPolls = 0;
  const { hub } = startHub({
    rows,
    // `ends` ends at its first poll; `other` keeps running.
    pollOnce: async (taskKey) => {
      if (taskKey === 'other') {
        otherPolls++;
        return { againMs: 60_000, failed: false };
      }
      return { done: { kind: 'expired' } };
    },
    maxPollsPerUpstream: 1,
    // Temporal slow to take the signal (a wave of tasks ending): it does not answer until released.
    signal: () => new Promise((r) => (signalled = () => r('sent'))),
  });
  try {
    await until(() => signalled !== undefined, 'the signal for `ends` under way');
    // The upstream's one slot polls `other` while the signal waits.
    await until(() => otherPolls === 1, '`other` polled while `ends` is signalled');
    signalled?.();
    await until(() => hub.size === 1, '`ends` delivered and dropped');
  } finally {
    signalled?.();
    await hub.stop({ release: false });
  }
});

test('a change the workflow has yet to record marks its task due before the signal; an end the poll recorded does not', async () => {
  const rows = [rowOf('changes', 1000), rowOf('ends', 1000)];
  const markedBeforeSignal = new Map<string, boolean>();
  const { hub, recorded } = startHub({
    rows,
    pollOnce: (taskKey) =>
      Promise.resolve({
        done:
          taskKey === 'ends'
            ? {
                kind: 'changed' as const,
                observation: { status: 'completed', createdAt: '', lastUpdatedAt: '', ttlMs: null, key: 'k' },
                recorded: true as const,
              }
            : { kind: 'expired' as const },
      }),
    maxPollsPerUpstream: 2,
    signal: (workflowId) => {
      const key = workflowId.replace(/^wf-/, '');
      markedBeforeSignal.set(key, recorded.marked.includes(key));
      return Promise.resolve('sent');
    },
  });
  try {
    await until(() => markedBeforeSignal.size === 2 && hub.size === 0, 'both delivered and dropped');
    // Nobody polls `changes` until its workflow has recorded the change and enlisted again.
    expect(markedBeforeSignal.get('changes')).toBe(true);
    expect(markedBeforeSignal.get('ends')).toBe(false);
    expect(recorded.marked).toEqual(['changes']);
  } finally {
    await hub.stop({ release: false });
  }
});

test("the API's row whose signal finds no workflow is asked once more before it goes; a workflow's own at once", async () => {
  // The API's row may be answered before Temporal has committed the start of a run that adopted it.
  const rows = [{ ...rowOf('created', 1000), generation: CREATED_ENLISTMENT }, rowOf('own', 1000)];
  const signals = new Map<string, number>();
  const { hub } = startHub({
    rows,
    pollOnce: () => Promise.resolve({ done: { kind: 'expired' as const } }),
    maxPollsPerUpstream: 2,
    signal: (workflowId) => {
      signals.set(workflowId, (signals.get(workflowId) ?? 0) + 1);
      return Promise.resolve('gone');
    },
  });
  try {
    await until(() => (signals.get('wf-created') ?? 0) >= 2 && hub.size === 0, 'both dropped');
    expect(signals.get('wf-own')).toBe(1);
    expect(signals.get('wf-created')).toBe(2);
  } finally {
    await hub.stop({ release: false });
  }
});

test("a store or Temporal outage: each task's retries wait longer and longer, the upstream is not asked faster than its interval, one warning per upstream", async () => {
  const rows = [rowOf('a', 100), rowOf('b', 100)];
  const attempts = new Map<string, number[]>();
  const warnings: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
  const { hub } = startHub({
    rows,
    // What a store write failing after the upstream answered looks like to the hub.
    pollOnce: (taskKey) => {
      attempts.set(taskKey, [...(attempts.get(taskKey) ?? []), Date.now()]);
      return Promise.reject(new Error('store unavailable'));
    },
    maxPollsPerUpstream: 2,
    retryMs: 40,
    logger,
  });
  try {
    await until(
      () => rows.every((r) => (attempts.get(r.taskKey)?.length ?? 0) >= 5),
      'five attempts of each task',
    );
    for (const times of attempts.values()) {
      const gaps = times.slice(1).map((t, i) => t - times[i]!);
      // The task's 100 ms interval first (each retry asks the upstream again), then 160 and 320 ms (later
      // under load, never sooner).
      [100, 100, 160, 320].forEach((least, i) => expect(gaps[i]).toBeGreaterThanOrEqual(least - 5));
    }
    // Ten failures, one warning: the upstream's window (10 s) has not passed.
    expect(warnings.filter((w) => w.includes('watch hub poll failed'))).toHaveLength(1);
  } finally {
    await hub.stop({ release: false });
  }
});
