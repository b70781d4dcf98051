/**
 * One look at a hosted call's queue (src/activities/hosted-slot.ts, takeHostedSlot) over the database
 * under test: a call stuck behind a waiting call whose workflow closed without giving its place back
 * (terminated while queued: its task stays unfinished) frees that place; a call whose arguments passed
 * the payload retention fails instead of waiting on. Temporal's answer about a workflow is a stand-in
 * here (which workflows are closed): the real one is asked in test/integration/hosted-queue-slots.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import pino from 'pino';
import type { ActivityDeps } from '../../src/activities/deps';
import { createHostedSlotActivities } from '../../src/activities/hosted-slot';
import { Cipher, generateKey } from '../../src/store/cipher';
import { HostedQueue } from '../../src/store/tasks/hosted-queue';
import { PayloadStore } from '../../src/store/tasks/payload-store';
import { TaskStore, taskKeyOf } from '../../src/store/tasks/task-store';
import { newTask } from '../helpers/task-rows';
import { freshDatabaseForFile } from '../helpers/store';

const database = freshDatabaseForFile();
const cipher = new Cipher({ activeKeyId: 'k1', keys: { k1: generateKey() } });

const workflowOf = (key: string) => `task-${key.slice(0, 32)}`;

async function setUp(closed: Set<string>) {
  const tasks = new TaskStore(database(), cipher);
  const payloads = new PayloadStore(database(), cipher);
  const asked: string[] = [];
  const activities = createHostedSlotActivities({
    store: tasks,
    payloads,
    hostedQueue: new HostedQueue(database()),
    workflowClosed: (id: string) => {
      asked.push(id);
      return Promise.resolve(closed.has(id));
    },
    settings: { minPollIntervalMs: 50, maxPollIntervalMs: 60_000, maxWatchMs: 60_000, pollFailureBudget: 3 },
    logger: pino({ level: 'silent' }),
  } as unknown as ActivityDeps);
  const task = async () => {
    const key = taskKeyOf(randomUUID());
    await tasks.insertTask(newTask(key, new Date().toISOString()));
    return { key, requestRef: await payloads.put(key, 'request', { relayedMeta: {} }) };
  };
  return { activities, payloads, asked, task };
}

test('a call stuck behind a waiting call whose workflow closed frees that place, asking only about silent calls', async () => {
  const closed = new Set<string>();
  const { activities, asked, task } = await setUp(closed);
  const upstreamId = `up-${randomUUID()}`;
  const look = (t: { key: string; requestRef: string }, shown?: number) =>
    new MockActivityEnvironment().run(activities.takeHostedSlot, {
      taskKey: t.key,
      upstreamId,
      upstream: 'example',
      maxConcurrent: 1,
      createdAt: new Date().toISOString(),
      requestRef: t.requestRef,
      ...(shown !== undefined && { shown }),
    });
  const [holder, dead, live] = [await task(), await task(), await task()];
  expect(await look(holder)).toEqual({ running: true });
  // `dead` took its place ten minutes ago, and its workflow was terminated since: it never looks again.
  await new HostedQueue(database(), () => new Date(Date.now() - 10 * 60_000)).acquire(
    dead.key,
    upstreamId,
    1,
  );
  closed.add(workflowOf(dead.key));
  expect(await look(live)).toEqual({ running: false, position: 2 });
  expect(asked).toEqual([]);
  // Still second at its next look: it asks about the silent call ahead (not the holder: it is not first).
  expect(await look(live, 2)).toEqual({ running: false, position: 1 });
  expect(asked).toEqual([workflowOf(dead.key)]);
});

test('a queued call whose arguments are gone fails clearly instead of waiting on', async () => {
  const { activities, task } = await setUp(new Set());
  const gone = await task();
  await database().deleteFrom('payloads').where('id', '=', gone.requestRef).execute();
  await expect(
    new MockActivityEnvironment().run(activities.takeHostedSlot, {
      taskKey: gone.key,
      upstreamId: `up-${randomUUID()}`,
      upstream: 'example',
      maxConcurrent: 1,
      createdAt: new Date().toISOString(),
      requestRef: gone.requestRef,
    }),
  ).rejects.toMatchObject({
    nonRetryable: true,
    message: expect.stringMatching(/longer than its arguments are kept.*nothing was sent/),
  });
});
