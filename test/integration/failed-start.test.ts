/**
 * What a client hears when its task's start did not answer in time (src/gateway/calls/failed-start.ts),
 * over the database under test: "try again" only when nothing was sent; otherwise the outcome the worker
 * recorded (the task, durable, so its handle; or the synchronous answer), and when nothing was recorded
 * an error that says the call may have been sent and was not repeated. Temporal is a stand-in that does
 * not answer (what the gateway sees when it is slow or away); the claims, tasks and payloads are real.
 */
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterFailedStart } from '../../src/gateway/calls/failed-start';
import { Cipher, generateKey } from '../../src/store/cipher';
import { FirstCalls } from '../../src/store/tasks/first-calls';
import { PayloadStore } from '../../src/store/tasks/payload-store';
import { TaskStore, taskKeyOf } from '../../src/store/tasks/task-store';
import { newTask } from '../helpers/task-rows';
import { freshDatabaseForFile } from '../helpers/store';

const database = freshDatabaseForFile();
const cipher = new Cipher({ activeKeyId: 'k1', keys: { k1: generateKey() } });

function deps() {
  return {
    firstCalls: new FirstCalls(database()),
    store: new TaskStore(database(), cipher),
    payloads: new PayloadStore(database(), cipher),
    logger: pino({ level: 'silent' }),
    startTimeoutMs: 10_000,
    engine: { firstOutcome: () => Promise.reject(new Error('deadline exceeded')) },
  };
}
const lateStart = new Error('deadline exceeded');

test('no worker claimed the call: nothing was sent, try again', async () => {
  const key = taskKeyOf(randomUUID());
  await expect(afterFailedStart(deps(), 'p', key, lateStart)).rejects.toMatchObject({
    kind: 'TaskEngineUnavailable',
    message: expect.stringMatching(/nothing was sent to the upstream\. Try again later/),
  });
  expect(await new FirstCalls(database()).stateOf(key)).toBe('abandoned');
});

test('a task the worker recorded (a hosted one, recorded before its call) is answered with its handle', async () => {
  const d = deps();
  const key = taskKeyOf(randomUUID());
  await d.firstCalls.claim(key, 'sending');
  await d.store.insertTask({ ...newTask(key, new Date().toISOString()), hosted: true });
  await d.firstCalls.move(key, 'sending', 'done');
  await expect(afterFailedStart(d, 'p', key, lateStart)).resolves.toMatchObject({
    kind: 'task',
    observation: { status: 'working' },
  });
});

test("the worker's synchronous answer, recorded, is the outcome", async () => {
  const d = deps();
  const key = taskKeyOf(randomUUID());
  await d.firstCalls.claim(key, 'sending');
  const ref = await d.payloads.put(key, 'result', { content: [{ type: 'text', text: 'done' }] });
  await d.firstCalls.move(key, 'sending', 'done');
  await expect(afterFailedStart(d, 'p', key, lateStart)).resolves.toEqual({ kind: 'result', resultRef: ref });
});

test('a call on its way with nothing recorded: the error says it may have been sent, never "try again"', async () => {
  const d = deps();
  const key = taskKeyOf(randomUUID());
  await d.firstCalls.claim(key, 'sending');
  const refused = afterFailedStart(d, 'p', key, lateStart);
  await expect(refused).rejects.toMatchObject({
    kind: 'InternalError',
    message: expect.stringMatching(/may have reached the upstream.*not repeated/),
  });
  await expect(refused).rejects.not.toMatchObject({ message: expect.stringMatching(/try again/i) });
});
