/**
 * A watch hub's periodic rounds (claim, renew) do not keep their fired timers (src/temporal/watch-hub.ts,
 * `every`): a worker runs its hub for weeks, a few rounds a second. Each timer a round set is watched with
 * a FinalizationRegistry; after a collection, all but the pending ones must be gone. Kept in a list, as
 * they were, none is ever collected. The store is a stand-in: the hub's own bookkeeping is under test.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import pino from 'pino';
import type { WatchHubDeps } from '../../src/temporal/watch-hub';
import { WatchHub } from '../../src/temporal/watch-hub';

// A collection on demand, without starting Node with --expose-gc.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

test('the timers of rounds that ran are not kept', async () => {
  const store = {
    claim: () => Promise.resolve([]),
    renew: () => Promise.resolve([]),
    release: () => Promise.resolve(0),
    remove: () => Promise.resolve(),
    markDue: () => Promise.resolve(),
    clearDue: () => Promise.resolve(),
  };
  const hub = new WatchHub({
    store: store as unknown as WatchHubDeps['store'],
    poll: { startCursor: () => Promise.resolve({}), pollOnce: () => Promise.resolve({ againMs: 1000 }) },
    signal: () => Promise.resolve('sent'),
    settings: {
      maxTasks: 10,
      maxPolls: 10,
      maxPollsPerUpstream: 10,
      leaseMs: 1000,
      claimEveryMs: 5,
      claimBatch: 10,
    },
    logger: pino({ level: 'silent' }),
  } as unknown as WatchHubDeps);

  let collected = 0;
  const registry = new FinalizationRegistry<void>(() => collected++);
  let created = 0;
  const realSetTimeout = global.setTimeout;
  const spy = jest.spyOn(global, 'setTimeout').mockImplementation(((
    ...args: Parameters<typeof setTimeout>
  ) => {
    const t = realSetTimeout(...args);
    registry.register(t, undefined);
    created++;
    return t;
  }) as typeof setTimeout);
  hub.start();
  try {
    // About a hundred claim rounds and a few renewals, then collections while the hub still runs.
    await new Promise((r) => realSetTimeout(r, 800));
    spy.mockRestore();
    expect(created).toBeGreaterThan(20);
    for (let i = 0; i < 10 && collected < created - 4; i++) {
      collect();
      await new Promise((r) => realSetTimeout(r, 20));
    }
    // The pending timers (one per round) may linger; every earlier one is gone.
    expect(collected).toBeGreaterThanOrEqual(created - 4);
  } finally {
    spy.mockRestore();
    await hub.stop({ release: false });
  }
});
