/**
 * Hosted calls to a 2025-era upstream written with the SDK 1.x server (stateful, ./fixtures/sdk1-upstream):
 * a hosted call may take longer than the instance's call deadline (its own `hosting.callDeadlineMs`
 * replaces it), while the same tool unhosted is cut; and tasks/cancel of a hosted call reaches the
 * server as `notifications/cancelled`, which stops its handler; the server's elicitation on the call's
 * own stream reaches the client as the task's question, and its answer goes back on the session; on a
 * server that keeps its streams (an event store), a chatty call keeps one resume point, the latest. Real
 * gateway, Temporal, both databases.
 */
import type { Kysely } from 'kysely';
import { Cipher } from '../../src/store/cipher';
import { openDatabase } from '../../src/store/database';
import { PayloadStore } from '../../src/store/tasks/payload-store';
import type { Database } from '../../src/store/schema';
import { taskKeyOf } from '../../src/store/tasks/task-store';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import type { Sdk1Upstream } from '../fixtures/sdk1-upstream';
import { startSdk1Upstream } from '../fixtures/sdk1-upstream';
import { TASKS_AND_FORM_CAPS } from '../helpers/mcp-client';

let sdk1: Sdk1Upstream;
/** The same server stateless (no session: each request stands alone, answered as JSON). */
let stateless: Sdk1Upstream;
/** The same server stateful with an event store: its streams' events carry ids, so answers can be resumed. */
let resumable: Sdk1Upstream;
let gw: TestGateway;
let db: Kysely<Database>;

beforeAll(async () => {
  sdk1 = await startSdk1Upstream('stateful');
  stateless = await startSdk1Upstream('stateless');
  resumable = await startSdk1Upstream('stateful', 0, { eventStore: true });
  gw = await startTestGateway({
    // Calls a client waits on are cut after 2 s here.
    config: { upstreams: { callDeadlineMs: 2000 } },
    projects: () => [
      {
        slug: 'hosted',
        namespacing: false,
        upstreams: [
          {
            alias: 'sdk1',
            url: sdk1.url,
            hosting: { tools: ['wait', 'ask'], promoteAfterMs: 500, callDeadlineMs: 20_000 },
          },
        ],
      },
      { slug: 'plain', namespacing: false, upstreams: [{ alias: 'sdk1', url: sdk1.url }] },
      {
        slug: 'stateless',
        namespacing: false,
        upstreams: [{ alias: 'sdk1', url: stateless.url, hosting: { tools: ['wait'], promoteAfterMs: 0 } }],
      },
      {
        slug: 'resumable',
        namespacing: false,
        upstreams: [
          {
            alias: 'sdk1',
            url: resumable.url,
            hosting: { tools: ['wait'], promoteAfterMs: 0, callDeadlineMs: 20_000 },
          },
        ],
      },
    ],
  });
  db = await openDatabase(gw.config.store);
}, 180_000);
afterAll(async () => {
  await db?.destroy();
  await gw?.close();
  await sdk1?.close();
  await stateless?.close();
  await resumable?.close();
});

/** A `wait` of `seconds` in project `slug` is a task at once, and completes with the server's answer. */
async function hostedWaitCompletes(slug: string, seconds: number): Promise<void> {
  const client = gw.clientFor(slug);
  const created = await client.callTool('wait', { seconds });
  expect(created.body.result).toMatchObject({ resultType: 'task', status: 'working' });
  const done = await client.waitForTask(String(created.body.result?.taskId), undefined, 30_000);
  expect(done.status).toBe('completed');
  expect(JSON.stringify(done.result)).toContain(`waited ${seconds} s`);
}

test("a hosted call outlasts the instance's call deadline; the same call unhosted is cut", async () => {
  const plain = await gw.clientFor('plain').callTool('wait', { seconds: 4 }, { tasks: false });
  expect(plain.body.error).toMatchObject({ code: -31015 });

  await hostedWaitCompletes('hosted', 4);
});

test('tasks/cancel of a hosted call sends notifications/cancelled; the server stops the call', async () => {
  const client = gw.clientFor('hosted');
  const created = await client.callTool('wait', { seconds: 60 });
  const taskId = String(created.body.result?.taskId);
  // The call is under way at the upstream (the window passed while it waited).
  const abortedBefore = sdk1.stats.aborted;
  const cancels = () => sdk1.stats.received.filter((r) => r.method === 'notifications/cancelled').length;
  const cancelsBefore = cancels();
  const cancelled = await client.request('tasks/cancel', { taskId });
  expect(cancelled.body.error).toBeUndefined();
  expect((await client.waitForTask(taskId, undefined, 15_000)).status).toBe('cancelled');
  const deadline = Date.now() + 10_000;
  while (sdk1.stats.aborted === abortedBefore && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(cancels()).toBe(cancelsBefore + 1);
  expect(sdk1.stats.aborted).toBe(abortedBefore + 1);
});

test("the server's elicitation during a hosted call is the task's question; the answer reaches the server", async () => {
  const client = gw.clientFor('hosted');
  const form = { capabilities: TASKS_AND_FORM_CAPS };
  const created = await client.callTool('ask', {}, form);
  expect(created.body.result).toMatchObject({ resultType: 'task' });
  const taskId = String(created.body.result?.taskId);
  await client.waitForTask(taskId, (s) => s === 'input_required', 20_000);
  const asking = (await client.getTask(taskId, form)).body.result;
  const [key, question] =
    Object.entries((asking?.inputRequests ?? {}) as Record<string, { method: string }>)[0] ?? [];
  expect(question?.method).toBe('elicitation/create');
  const updated = await client.request(
    'tasks/update',
    { taskId, inputResponses: { [String(key)]: { action: 'accept', content: { name: 'Ada' } } } },
    form,
  );
  expect(updated.body.error).toBeUndefined();
  const done = await client.waitForTask(taskId, undefined, 20_000);
  expect(done.status).toBe('completed');
  expect(JSON.stringify(done.result)).toContain('Ada');
});

test('a stateless SDK 1.x server: the hosted call is a task at once and its JSON answer completes it', async () => {
  await hostedWaitCompletes('stateless', 1);
});

test('a chatty call on a resumable stream keeps one resume point, the latest, not one per second', async () => {
  const client = gw.clientFor('resumable');
  // Progress every 100 ms for 4 s: a resume point is due every second while events arrive.
  const created = await client.callTool('wait', { seconds: 4, everyMs: 100 });
  expect(created.body.result).toMatchObject({ resultType: 'task' });
  const taskId = String(created.body.result?.taskId);
  const done = await client.waitForTask(taskId, undefined, 30_000);
  expect(done.status).toBe('completed');
  expect(JSON.stringify(done.result)).toContain('waited 4 s');
  const taskKey = taskKeyOf(taskId);
  const rows = await db
    .selectFrom('payloads')
    .select(['id', 'created_at'])
    .where('task_key', '=', taskKey)
    .where('kind', '=', 'hosted_stream')
    .execute();
  expect(rows).toHaveLength(1);
  // Still encrypted and bound to its task: it opens with the gateway's key, as the point of round 0.
  const points = await new PayloadStore(db, new Cipher(gw.config.encryption)).allOf<{
    round: number;
    point: { eventId: string };
  }>(taskKey, 'hosted_stream');
  expect(points).toEqual([{ round: 0, point: expect.objectContaining({ eventId: expect.any(String) }) }]);
  // It was replaced while the call ran: stored at least a second after the call was made.
  expect(Date.parse(String(rows[0]?.created_at))).toBeGreaterThanOrEqual(
    Date.parse(String(done.createdAt)) + 1000,
  );
});
