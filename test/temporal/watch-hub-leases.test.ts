/**
 * What a watch hub does with its leases when it could not renew them for a whole lease
 * (src/temporal/watch-hub.ts): it stops polling what it held and goes on as another lease owner, so a
 * later renewal never extends the leases of rows nobody polls any more (they expire; any hub claims
 * them again); what it does with a row leased to it that it does not hold (it gives it back) and with
 * one it claimed while a renewal read its rows (it keeps it); and how a
 * nudge (a task enlisted in its process) makes it claim at once, one round at a time. The
 * store and the poll are stand-ins recording the calls: what is under test is the
 * hub's own bookkeeping, not the database (test/integration/watch-hub.test.ts runs the real thing).
 * Dropping what it held is logged as a warning.
 */
import pino from 'pino';
import type { WatchHubDeps } from '../../src/temporal/watch-hub';
import { WatchHub } from '../../src/temporal/watch-hub';

const LEASE_MS = 300;

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`never: ${what}`);
}

/** A started hub over a stand-in store; its polls find nothing changed. */
function startHub(
  store: Record<string, unknown>,
  claimEveryMs = 50,
  logger: pino.Logger = pino({ level: 'silent' }),
): WatchHub {
  const hub = new WatchHub({
    store: store as unknown as WatchHubDeps['store'],
    poll: { startCursor: () => Promise.resolve({}), pollOnce: () => Promise.resolve({ againMs: 10_000 }) },
    signal: () => Promise.resolve('sent'),
    settings: {
      maxTasks: 10,
      maxPolls: 4,
      maxPollsPerUpstream: 4,
      leaseMs: LEASE_MS,
      claimEveryMs,
      claimBatch: 10,
    },
    logger,
  } as unknown as WatchHubDeps);
  hub.start();
  return hub;
}

test('a hub that lost its leases renews none of them later, and claims again as another owner', async () => {
  const claims: string[] = [];
  const renewals: string[] = [];
  let renewFails = false;
  const row = {
    taskKey: 'k1',
    workflowId: 'wf-1',
    project: 'p',
    upstream: 'u',
    generation: 'run/1',
    watch: {},
    pollIntervalMs: 1000,
    leaseUntil: '',
  };
  const store = {
    claim: (owner: string) => {
      claims.push(owner);
      return Promise.resolve([row]);
    },
    renew: (owner: string) => {
      renewals.push(owner);
      return renewFails
        ? Promise.reject(new Error('database unreachable'))
        : Promise.resolve([{ taskKey: row.taskKey, generation: row.generation }]);
    },
    release: () => Promise.resolve(0),
    remove: () => Promise.resolve(),
  };
  const logged: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => logged.push(JSON.parse(line)) });
  const hub = startHub(store, 50, logger);
  try {
    const first = hub.owner;
    await until(() => hub.size === 1, 'the first claim');
    renewFails = true;
    await until(() => hub.size === 0, 'the held row dropped after a lease without renewal');
    expect(hub.owner).not.toBe(first);
    // Said, not silent: how many tasks it dropped and how long since its last renewal.
    const dropped = logged.find((l) => String(l.msg).startsWith('watch hub dropped the tasks it held'));
    expect(dropped).toMatchObject({ tasks: 1 });
    expect(Number(dropped?.sinceRenewedMs)).toBeGreaterThan(LEASE_MS);
    const renewedBefore = renewals.length;
    const claimedBefore = claims.length;
    renewFails = false;
    await until(() => claims.filter((o) => o === hub.owner).length > 0 && hub.size === 1, 'a claim again');
    // Never again the old owner: its leases, on rows this hub no longer polls, run out.
    expect(renewals.slice(renewedBefore)).not.toContain(first);
    expect(claims.slice(claimedBefore)).not.toContain(first);
  } finally {
    await hub.stop({ release: false });
  }
});

test('a row leased to the hub that it does not hold (a claim that failed after its statement) is given back at the next renewal', async () => {
  const released: string[][] = [];
  const held = { taskKey: 'held', generation: 'run/1' };
  const stray = { taskKey: 'stray', generation: 'run/7' };
  const row = {
    ...held,
    workflowId: 'wf-1',
    project: 'p',
    upstream: 'u',
    watch: {},
    pollIntervalMs: 1000,
    leaseUntil: '',
  };
  let claimed = false;
  const store = {
    // One claim round takes `held`; the database also leased `stray` to this owner (a claim round whose
    // statement went through but whose answer never reached the hub).
    claim: () => {
      if (claimed) return Promise.resolve([]);
      claimed = true;
      return Promise.resolve([row]);
    },
    renew: () => Promise.resolve([held, stray]),
    release: (_owner: string, keys?: string[]) => {
      released.push(keys ?? []);
      return Promise.resolve(keys?.length ?? 0);
    },
    remove: () => Promise.resolve(),
  };
  const hub = startHub(store);
  try {
    await until(() => released.length > 0, 'the stray row given back');
    expect(released[0]).toEqual(['stray']);
    // What it holds, it keeps (and keeps renewing).
    expect(hub.size).toBe(1);
  } finally {
    await hub.stop({ release: false });
  }
});

test('a nudge claims at once, nudges that come together share one round, and rounds never overlap', async () => {
  let running = 0;
  let overlapped = false;
  let rounds = 0;
  let finishRound: (() => void) | undefined;
  const store = {
    claim: async () => {
      rounds++;
      running++;
      if (running > 1) overlapped = true;
      await new Promise<void>((r) => (finishRound = r));
      running--;
      return [];
    },
    renew: () => Promise.resolve([]),
    release: () => Promise.resolve(0),
    remove: () => Promise.resolve(),
  };
  // The periodic round is a minute away: only the nudges can claim within this test.
  const hub = startHub(store, 60_000);
  try {
    for (let i = 0; i < 10; i++) hub.nudge();
    await until(() => rounds === 1, 'a round soon after the nudges');
    // Nudged while that round runs: one more round after it, not a second at the same time.
    hub.nudge();
    hub.nudge();
    await new Promise((r) => setTimeout(r, 100));
    expect(rounds).toBe(1);
    finishRound?.();
    await until(() => rounds === 2, 'the round asked for during the first');
    finishRound?.();
    await new Promise((r) => setTimeout(r, 100));
    expect(rounds).toBe(2);
    expect(overlapped).toBe(false);
  } finally {
    finishRound?.();
    await hub.stop({ release: false });
  }
});

test('rows claimed while a renewal reads are kept: only what the hub held before the read can be dropped', async () => {
  const rowOf = (taskKey: string) => ({
    taskKey,
    generation: 'run/1',
    workflowId: `wf-${taskKey}`,
    project: 'p',
    upstream: 'u',
    watch: {},
    pollIntervalMs: 1000,
    leaseUntil: '',
  });
  const [a, b] = [rowOf('a'), rowOf('b')];
  const keyOf = (r: typeof a) => ({ taskKey: r.taskKey, generation: r.generation });
  let step: 'first claim' | 'renewing' | 'claimed during renewal' | 'done' = 'first claim';
  let finishRenewal: (() => void) | undefined;
  const store = {
    claim: () => {
      if (step === 'first claim') {
        step = 'renewing';
        return Promise.resolve([a]);
      }
      if (step === 'renewing' && finishRenewal) {
        step = 'claimed during renewal';
        return Promise.resolve([b]);
      }
      return Promise.resolve([]);
    },
    // The first renewal after `a` reads before `b` is claimed and answers after; later ones see both.
    renew: () => {
      if (step === 'renewing' && !finishRenewal) {
        return new Promise((resolve) => (finishRenewal = () => resolve([keyOf(a)])));
      }
      return Promise.resolve(step === 'done' ? [keyOf(a), keyOf(b)] : [keyOf(a)]);
    },
    release: () => Promise.resolve(0),
    remove: () => Promise.resolve(),
  };
  const hub = startHub(store);
  try {
    await until(
      () => step === 'claimed during renewal' && hub.size === 2,
      'b claimed while the renewal reads',
    );
    step = 'done';
    finishRenewal?.();
    await new Promise((r) => setTimeout(r, 20));
    expect(hub.size).toBe(2);
  } finally {
    await hub.stop({ release: false });
  }
});
