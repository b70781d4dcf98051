/**
 * The watch hub's statements (store/tasks/watch-hub.ts) on the database under test: enlisting marks the
 * task due, a claim leases only due rows no hub holds and clears the mark, renewal keeps only what the
 * owner still holds (a re-enlisted row is dropped), an expired lease is claimed by another owner, removal
 * spares a newer enlistment, and release makes rows due again. A lease is the hub's own row (migration
 * 0027): renewing it writes no task row, and a row claimed by a hub of the earlier version (which renews
 * per row) is held by its own lease. A claim never leases more than it was asked for.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely, KyselyPlugin } from 'kysely';
import { Cipher, generateKey } from '../../../src/store/cipher';
import { openDatabase } from '../../../src/store/database';
import type { Database } from '../../../src/store/schema';
import { TaskStore, taskKeyOf } from '../../../src/store/tasks/task-store';
import type { WatchEnlistment } from '../../../src/store/tasks/watch-hub';
import { WatchHubStore } from '../../../src/store/tasks/watch-hub';
import { testStoreConfig } from '../../helpers/store';
import { newTask } from '../../helpers/task-rows';

let db: Kysely<Database>;
let tasks: TaskStore;
let hub: WatchHubStore;
let clock = new Date('2026-12-05T00:00:00Z');
const advance = (ms: number) => (clock = new Date(clock.getTime() + ms));

let config: Awaited<ReturnType<typeof testStoreConfig>>;

beforeAll(async () => {
  config = await testStoreConfig();
  db = await openDatabase(config);
  tasks = new TaskStore(db, new Cipher({ activeKeyId: 'k1', keys: { k1: generateKey() } }), {
    now: () => clock,
  });
  hub = new WatchHubStore(db, () => clock);
});
afterAll(async () => {
  await db?.destroy();
});

async function runningTask(project = 'p'): Promise<string> {
  const key = taskKeyOf(randomUUID());
  const at = clock.toISOString();
  await tasks.insertTask(newTask(key, at, {}, { project, upstream: 'u' }));
  return key;
}

const enlistment = (taskKey: string, generation: string): WatchEnlistment => ({
  taskKey,
  workflowId: `task-${taskKey.slice(0, 32)}`,
  project: 'p',
  upstream: 'u',
  generation,
  watch: { taskKey, knownKey: 'k', pollIntervalMs: 100 },
  pollIntervalMs: 100,
});

const dueMark = async (key: string) => (await tasks.getTask(key))?.watchDueAt;
/** Clears a task's staleness mark directly (a test's starting point; the store clears only held rows). */
const unmark = (key: string) =>
  db.updateTable('tasks').set({ watch_due_at: null }).where('task_key', '=', key).execute();

test('claims lease due, unheld rows once; renewal keeps them; an expired lease goes to another owner', async () => {
  // Rows left by other tests in this file are released first: this test sees only its own.
  await db.deleteFrom('watch_hub').execute();
  const [a, b, c] = [await runningTask(), await runningTask(), await runningTask()];
  for (const key of [a, b, c]) await hub.enlist(enlistment(key, 'run/1'));
  advance(1000);
  expect(await dueMark(a)).toBeDefined();

  const first = await hub.claim('hub-1', 10_000, 2);
  expect(first).toHaveLength(2);
  expect(first[0]).toMatchObject({ workflowId: expect.stringMatching(/^task-/), generation: 'run/1' });
  expect(first[0]?.watch).toMatchObject({ knownKey: 'k' });
  // Claimed: polled from now on, no longer due.
  expect(await dueMark(first[0]!.taskKey)).toBeUndefined();
  // Held rows are not claimed again, by anyone; the third is.
  const second = await hub.claim('hub-2', 10_000, 10);
  expect(second.map((r) => r.taskKey)).toEqual([a, b, c].filter((k) => !first.some((r) => r.taskKey === k)));
  expect(await hub.claim('hub-3', 10_000, 10)).toEqual([]);

  advance(5_000);
  expect((await hub.renew('hub-1', 10_000)).map((r) => r.taskKey).sort()).toEqual(
    first.map((r) => r.taskKey).sort(),
  );
  // hub-2 stops renewing (its worker died): after its lease, hub-3 takes its row; hub-1's are still held.
  advance(6_000);
  // A round that looks at unleased rows only does not see it; one that looks for orphans does.
  expect(await hub.claim('hub-3', 10_000, 10, { orphans: false })).toEqual([]);
  const takenOver = await hub.claim('hub-3', 10_000, 10);
  expect(takenOver.map((r) => r.taskKey)).toEqual(second.map((r) => r.taskKey));
  expect(await hub.renew('hub-2', 10_000)).toEqual([]);
});

test('a claim leases at most its limit, whichever rows it reads (a hub never goes over its cap)', async () => {
  // On PostgreSQL an `in (subquery … limit)` over the lease-owner index was run again per candidate row,
  // each run skipping the rows already leased: 3 or 4 rows for a limit of 2 (the hub at its cap held 3).
  for (const orphans of [false, true, false, true, false]) {
    await db.deleteFrom('watch_hub').execute();
    for (let i = 0; i < 4; i++) await hub.enlist(enlistment(await runningTask(), 'run/1'));
    advance(1000);
    expect(await hub.claim(`hub-${randomUUID()}`, 10_000, 2, { orphans })).toHaveLength(2);
  }
});

test('a re-enlisted row leaves its holder at renewal, and removal spares the newer enlistment', async () => {
  const key = await runningTask();
  await hub.enlist(enlistment(key, 'run/1'));
  const [claimed] = await hub
    .claim('hub-a', 10_000, 1000)
    .then((rows) => rows.filter((r) => r.taskKey === key));
  expect(claimed?.generation).toBe('run/1');
  // The workflow applied a change and enlisted again: the row is due, unheld, with the new generation.
  await hub.enlist(enlistment(key, 'run/2'));
  expect(await dueMark(key)).toBeDefined();
  expect((await hub.renew('hub-a', 10_000)).some((r) => r.taskKey === key)).toBe(false);
  // The old holder's late removal (its generation) leaves the new row alone.
  await hub.remove(key, 'run/1');
  const again = (await hub.claim('hub-b', 10_000, 1000)).filter((r) => r.taskKey === key);
  expect(again.map((r) => r.generation)).toEqual(['run/2']);
  await hub.remove(key, 'run/2');
  expect(await db.selectFrom('watch_hub').select('task_key').where('task_key', '=', key).execute()).toEqual(
    [],
  );
});

test('release gives rows back due at once; delist deletes', async () => {
  const key = await runningTask();
  await hub.enlist(enlistment(key, 'run/1'));
  expect((await hub.claim('hub-x', 60_000, 1000)).some((r) => r.taskKey === key)).toBe(true);
  expect(await hub.release('hub-x')).toBeGreaterThanOrEqual(1);
  expect(await dueMark(key)).toBeDefined();
  // Released rows are unleased: a round that reads only those takes them.
  expect((await hub.claim('hub-y', 60_000, 1000, { orphans: false })).some((r) => r.taskKey === key)).toBe(
    true,
  );
  await hub.delist(key);
  expect(await hub.renew('hub-y', 60_000)).not.toContainEqual(expect.objectContaining({ taskKey: key }));
});

test("a deleted project's tasks lose their rows", async () => {
  const project = `gone-${randomUUID()}`;
  const key = await runningTask(project);
  await hub.enlist(enlistment(key, 'run/1'));
  expect(await tasks.deleteProjectTasks(project, 100)).toBe(1);
  expect(await db.selectFrom('watch_hub').select('task_key').where('task_key', '=', key).execute()).toEqual(
    [],
  );
});

test("renewal extends the hub's own lease and writes no task row; a row of an earlier version's hub is held by its own lease", async () => {
  await db.deleteFrom('watch_hub').execute();
  const [mine, old] = [await runningTask(), await runningTask()];
  await hub.enlist(enlistment(mine, 'run/1'));
  const [claimed] = await hub.claim('hub-new', 10_000, 10);
  expect(claimed?.taskKey).toBe(mine);
  const leaseAtClaim = await db
    .selectFrom('watch_hub')
    .select('lease_until')
    .where('task_key', '=', mine)
    .executeTakeFirstOrThrow();
  // Renewed for a minute, well past the claim-time lease_until: the row is untouched and still held.
  for (let i = 0; i < 12; i++) {
    advance(5_000);
    expect((await hub.renew('hub-new', 10_000)).map((r) => r.taskKey)).toEqual([mine]);
  }
  expect(
    await db
      .selectFrom('watch_hub')
      .select('lease_until')
      .where('task_key', '=', mine)
      .executeTakeFirstOrThrow(),
  ).toEqual(leaseAtClaim);
  expect(await hub.claim('hub-other', 10_000, 10)).toEqual([]);

  // A hub of the earlier version leased a row itself (no lease of its own): held until that lease passes.
  await hub.enlist(enlistment(old, 'run/1'));
  await db
    .updateTable('watch_hub')
    .set({ lease_owner: 'hub-before-0027', lease_until: new Date(clock.getTime() + 10_000).toISOString() })
    .where('task_key', '=', old)
    .execute();
  expect(await hub.claim('hub-other', 10_000, 10)).toEqual([]);
  advance(11_000);
  // hub-new did not renew for 11 s: its row is free too, and both go to the hub that claims now.
  expect((await hub.claim('hub-other', 10_000, 10)).map((r) => r.taskKey).sort()).toEqual([mine, old].sort());
  expect(await hub.renew('hub-new', 10_000)).toEqual([]);
});

test("a hub's late polls mark the running tasks it holds due since their poll was due, never an ended one or another hub's; polled again, the mark goes", async () => {
  await db.deleteFrom('watch_hub').execute();
  const [late, other, elsewhere] = [await runningTask(), await runningTask(), await runningTask()];
  const ended = taskKeyOf(randomUUID());
  await tasks.insertTask(
    newTask(ended, clock.toISOString(), { status: 'completed' }, { project: 'p', upstream: 'u' }),
  );
  for (const key of [late, other, ended]) await hub.enlist(enlistment(key, 'run/1'));
  advance(1);
  expect((await hub.claim('hub-late', 10_000, 10)).map((r) => r.taskKey).sort()).toEqual(
    [late, other, ended].sort(),
  );
  await hub.enlist(enlistment(elsewhere, 'run/1'));
  advance(1);
  expect((await hub.claim('hub-elsewhere', 10_000, 10)).map((r) => r.taskKey)).toEqual([elsewhere]);
  const since = new Date(clock.getTime() - 12_000).toISOString();
  // `elsewhere` is another hub's (taken over, or enlisted again and claimed, while this one marked).
  await hub.markDue([late, ended, elsewhere], since, 'hub-late');
  expect(await dueMark(late)).toBe(since);
  expect(await dueMark(ended)).toBeUndefined();
  expect(await dueMark(other)).toBeUndefined();
  expect(await dueMark(elsewhere)).toBeUndefined();
  await hub.clearDue([late, other]);
  expect(await dueMark(late)).toBeUndefined();
});

test('a row enlisted again while its hub clears the mark keeps the mark until a hub claims it', async () => {
  await db.deleteFrom('watch_hub').execute();
  const key = await runningTask();
  await hub.enlist(enlistment(key, 'run/1'));
  advance(1);
  expect((await hub.claim('hub-a', 10_000, 10)).map((r) => r.taskKey)).toEqual([key]);
  expect(await dueMark(key)).toBeUndefined();
  // The workflow enlists again (input forwarded): due and unpolled from now, held by no hub.
  const reenlistedAt = clock.toISOString();
  await hub.enlist(enlistment(key, 'run/2'));
  // hub-a, still thinking it polls the task, clears (a claim's or a catch-up's clearing): the mark stays.
  await hub.clearDue([key]);
  expect(await dueMark(key)).toBe(reenlistedAt);
  advance(1);
  expect((await hub.claim('hub-b', 10_000, 10)).map((r) => r.taskKey)).toEqual([key]);
  expect(await dueMark(key)).toBeUndefined();
});

test('a delivered change marks its task due only while the hub still holds that enlistment; an earlier mark stands', async () => {
  const [held, reenlisted] = [await runningTask(), await runningTask()];
  for (const key of [held, reenlisted]) await hub.enlist(enlistment(key, 'run/1'));
  advance(1);
  const claimed = await hub.claim('hub-a', 10_000, 10);
  expect(claimed.map((r) => r.taskKey).sort()).toEqual([held, reenlisted].sort());
  expect(await dueMark(held)).toBeUndefined();
  // The workflow enlisted `reenlisted` again (its row is being polled by whoever claims it).
  await hub.enlist(enlistment(reenlisted, 'run/2'));
  await unmark(reenlisted);
  const first = new Date(clock.getTime() - 5_000).toISOString();
  await hub.markAnswered(held, 'run/1', 'hub-a', first);
  await hub.markAnswered(reenlisted, 'run/1', 'hub-a', first);
  // Another hub's word on `held` (it holds no such row) changes nothing either.
  await hub.markAnswered(held, 'run/1', 'hub-b', clock.toISOString());
  expect(await dueMark(held)).toBe(first);
  expect(await dueMark(reenlisted)).toBeUndefined();
  // A retried delivery does not move the mark later.
  await hub.markAnswered(held, 'run/1', 'hub-a', clock.toISOString());
  expect(await dueMark(held)).toBe(first);
});

test('a task the API enlists as it records it is due from its first poll, not before (watch lag, stale mark)', async () => {
  const key = taskKeyOf(randomUUID());
  const firstPoll = new Date(clock.getTime() + 5_000).toISOString();
  await tasks.insertTask(
    newTask(key, clock.toISOString(), {}, { project: 'early', upstream: 'u', firstPollDueAt: firstPoll }),
  );
  await WatchHubStore.enlistCreated(db, enlistment(key, 'created'), firstPoll);
  expect(await dueMark(key)).toBe(firstPoll);
  const lag = (await tasks.overdueWatches()).find((o) => o.project === 'early');
  expect(lag?.dueSince).toBe(firstPoll);
  // Not claimable before then; claimed after, and no longer due.
  expect((await hub.claim('hub-early', 10_000, 100)).map((r) => r.taskKey)).not.toContain(key);
  advance(5_000);
  expect((await hub.claim('hub-early', 10_000, 100)).map((r) => r.taskKey)).toContain(key);
  expect(await dueMark(key)).toBeUndefined();
});

test.each([
  ['enlisted', (store: WatchHubStore, key: string) => store.enlist(enlistment(key, 'run/1'))],
  [
    'given back',
    async (store: WatchHubStore, key: string) => {
      await hub.enlist(enlistment(key, 'run/1'));
      await hub.claim('hub-leaving', 10_000, 10);
      await store.release('hub-leaving');
    },
  ],
] as const)(
  'a row claimed while it is being %s is never left marked due (the mark comes first)',
  async (_, act) => {
    // A hub's claim may run between the statements of an enlistment or a release (another worker's hub, or
    // this one's periodic round, while the other waits for a connection): had the row been claimable before
    // the task was marked due, the claim's clearing came first and the mark stayed on a task the hub polls
    // (tasks/get said stale; the watch lag grew until the task ended: bench:scale-out, two workers).
    // Every statement of the store under test is followed here by a claim (another hub, on a connection of
    // its own), so a claim runs between each two.
    const other = await openDatabase(config);
    try {
      const otherHub = new WatchHubStore(other, () => clock);
      const owner = `hub-${randomUUID()}`;
      const claimed: string[] = [];
      const claimAfterEach: KyselyPlugin = {
        transformQuery: (args) => args.node,
        transformResult: async (args) => {
          claimed.push(...(await otherHub.claim(owner, 10_000, 10)).map((r) => r.taskKey));
          return args.result;
        },
      };
      await db.deleteFrom('watch_hub').execute();
      const key = await runningTask();
      await unmark(key);
      await act(new WatchHubStore(db.withPlugin(claimAfterEach), () => clock), key);
      expect(claimed).toEqual([key]);
      expect(await dueMark(key)).toBeUndefined();
    } finally {
      await other.destroy();
    }
  },
);

test("a dead hub's tasks read as unpolled since its lease ended (tasks/get's mark, the watch lag) until another hub takes them", async () => {
  const project = 'dead-hub';
  const key = await runningTask(project);
  await hub.enlist({ ...enlistment(key, 'run/1'), project });
  const claimedAt = clock.getTime();
  expect((await hub.claim('hub-killed', 10_000, 10)).map((r) => r.taskKey)).toContain(key);
  const lagOf = async () => (await tasks.overdueWatches()).find((o) => o.project === project);
  expect(await dueMark(key)).toBeUndefined();
  advance(9_000);
  // Alive (its lease has a second left): polled, as far as anyone can tell.
  expect(await dueMark(key)).toBeUndefined();
  expect(await lagOf()).toBeUndefined();

  advance(2_000);
  const leaseEnd = new Date(claimedAt + 10_000).toISOString();
  expect(await dueMark(key)).toBe(leaseEnd);
  expect(await lagOf()).toEqual({ project, upstream: 'u', dueSince: leaseEnd });
  // Another hub's renewal keeps the dead lease while it holds rows: it is what says since when.
  await hub.renew('hub-alive', 10_000);
  expect(await dueMark(key)).toBe(leaseEnd);

  expect((await hub.claim('hub-alive', 10_000, 10)).map((r) => r.taskKey)).toContain(key);
  expect(await dueMark(key)).toBeUndefined();
  expect(await lagOf()).toBeUndefined();
  await hub.renew('hub-alive', 10_000);
  const owners = await db.selectFrom('watch_hub_owners').select('owner').execute();
  expect(owners.map((o) => o.owner)).not.toContain('hub-killed');

  // A dead hub whose lease row is already gone (deleted at once by a renewal of the earlier code): the
  // row's own lease says until when it was held, the rule a claim frees it by.
  const orphan = await runningTask(project);
  await hub.enlist({ ...enlistment(orphan, 'run/1'), project });
  const orphanClaimedAt = clock.getTime();
  expect((await hub.claim('hub-gone', 10_000, 10)).map((r) => r.taskKey)).toContain(orphan);
  await db.deleteFrom('watch_hub_owners').where('owner', '=', 'hub-gone').execute();
  // Within the row's own lease it is held (as by a hub of the earlier version, which renews per row).
  expect(await dueMark(orphan)).toBeUndefined();
  advance(10_001);
  await hub.renew('hub-alive', 10_000); // the hub that took the first task over stays alive
  const orphanLeaseEnd = new Date(orphanClaimedAt + 10_000).toISOString();
  expect(await dueMark(orphan)).toBe(orphanLeaseEnd);
  expect(await lagOf()).toEqual({ project, upstream: 'u', dueSince: orphanLeaseEnd });
});
