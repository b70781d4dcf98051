/**
 * The answered input keys of a task (store/tasks/answered-inputs.ts, migration 0026) on the database under
 * test: answers recorded at the same time all count (one appending statement, no read-modify-write), a
 * new observation of the task keeps them, and what is stored names no key in the clear.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { TaskSnapshot } from '../../../src/protocol';
import { Cipher, generateKey } from '../../../src/store/cipher';
import { openDatabase } from '../../../src/store/database';
import type { Database } from '../../../src/store/schema';
import { answeredInputHash } from '../../../src/store/tasks/answered-inputs';
import { TaskStore, taskKeyOf } from '../../../src/store/tasks/task-store';
import { testStoreConfig } from '../../helpers/store';
import { newTask } from '../../helpers/task-rows';

let db: Kysely<Database>;
let store: TaskStore;

beforeAll(async () => {
  db = await openDatabase(await testStoreConfig());
  store = new TaskStore(db, new Cipher({ activeKeyId: 'k1', keys: { k1: generateKey() } }));
});
afterAll(async () => {
  await db?.destroy();
});

const ask = (message: string) => ({
  method: 'elicitation/create',
  params: { mode: 'form', message, requestedSchema: { type: 'object', properties: {} } },
});

async function waitingTask(keys: string[]): Promise<string> {
  const taskKey = taskKeyOf(randomUUID());
  const now = new Date().toISOString();
  const inputRequests = Object.fromEntries(keys.map((k) => [k, ask(`${k}?`)]));
  await store.insertTask(
    newTask(taskKey, now, { status: 'input_required', inputRequests } as Partial<TaskSnapshot>, {
      project: 'prj',
      tool: 'confirm_delete',
    }),
  );
  return taskKey;
}

test('a task nobody answered has no answered inputs', async () => {
  const taskKey = await waitingTask(['a']);
  expect((await store.getTask(taskKey))?.answeredInputs).toBeUndefined();
});

test('answers recorded at the same time all count, and a later observation keeps them', async () => {
  const keys = Array.from({ length: 12 }, (_, i) => `question, ${i}\n"quoted"`);
  const taskKey = await waitingTask(keys);
  await Promise.all(keys.map((k) => store.recordAnsweredInputs(taskKey, [k])));
  const now = new Date().toISOString();
  await store.recordSnapshot(taskKey, {
    status: 'working',
    createdAt: now,
    lastUpdatedAt: now,
    ttlMs: null,
  } as TaskSnapshot);
  const task = await store.getTask(taskKey);
  expect(task?.snapshot.status).toBe('working');
  expect(new Set(task?.answeredInputs)).toEqual(new Set(keys.map(answeredInputHash)));
});

test('the stored column holds hashes, never the upstream’s keys', async () => {
  const taskKey = await waitingTask(['delete-customer-4711']);
  await store.recordAnsweredInputs(taskKey, ['delete-customer-4711']);
  const row = await db
    .selectFrom('tasks')
    .select('answered_inputs')
    .where('task_key', '=', taskKey)
    .executeTakeFirstOrThrow();
  expect(row.answered_inputs).not.toContain('4711');
  expect(row.answered_inputs).toBe(`${answeredInputHash('delete-customer-4711')},`);
});
