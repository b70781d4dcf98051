/**
 * What a hosted call's queue holds while it waits (docs/hosted-tasks.md, "The queue"): nothing of the
 * worker's. With `temporal.maxConcurrentActivities: 2` and an upstream that runs one hosted call at a
 * time, queued calls hold no activity slot, so another project's hosted call runs at once instead of after
 * the queue; a call whose workflow was terminated while it held the slot does not hold it forever; and a
 * call whose upstream asks the client for input lends its slot to the next call meanwhile. Real gateway,
 * Temporal dev server and example upstream (tasks not advertised, so its tools are ordinary).
 */
import { taskKeyOf } from '../../src/store/tasks/task-store';
import { taskWorkflowId } from '../../src/workflows/messages';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import type { McpTestClient } from '../helpers/mcp-client';
import { TASKS_AND_FORM_CAPS } from '../helpers/mcp-client';
import { until } from '../helpers/until';

let gw: TestGateway;
/** When each hosted slow_compute reached the upstream, by label. */
const reached = new Map<string, number>();

const hostedTools = ['slow_compute', 'test_input_required_*'];

beforeAll(async () => {
  gw = await startTestGateway({
    temporal: { maxConcurrentActivities: 2 },
    upstream: {
      advertiseTasks: false,
      onRequest: (request) => {
        const args = (request.params as { arguments?: { label?: unknown } } | undefined)?.arguments;
        if (request.method === 'tools/call' && typeof args?.label === 'string')
          reached.set(args.label, Date.now());
      },
    },
    projects: (url) => [
      {
        slug: 'narrow',
        namespacing: false,
        upstreams: [
          {
            alias: 'one-at-a-time',
            url,
            hosting: {
              tools: hostedTools,
              promoteAfterMs: 0,
              maxConcurrent: 1,
              repeatable: ['slow_compute'],
            },
          },
        ],
      },
      {
        slug: 'neighbour',
        namespacing: false,
        upstreams: [{ alias: 'example', url, hosting: { tools: ['slow_compute'], promoteAfterMs: 0 } }],
      },
    ],
  });
}, 180_000);
afterAll(async () => {
  await gw?.close();
});

async function hostedTask(client: McpTestClient, seconds: number, label: string): Promise<string> {
  const created = await client.callTool('slow_compute', { seconds, label });
  expect(created.body.result).toMatchObject({ resultType: 'task', status: 'working' });
  return String(created.body.result?.taskId);
}

async function statusOf(client: McpTestClient, taskId: string): Promise<string> {
  return String((await client.getTask(taskId)).body.result?.status);
}

test("a queue holds no worker's activity slots: a neighbour's hosted call runs while it waits", async () => {
  const narrow = gw.clientFor('narrow');
  const queued: string[] = [];
  for (let i = 0; i < 4; i++) queued.push(await hostedTask(narrow, 3, `n${i}`));
  // One runs, three wait: had each waiter held an activity slot, the worker's two would both be taken.
  await narrow.waitForTask(
    queued[3] as string,
    (_s, t) => /^Queued: position 3/.test(String(t.statusMessage)),
    20_000,
  );

  const neighbour = await hostedTask(gw.clientFor('neighbour'), 0.5, 'neighbour');
  const done = await gw.clientFor('neighbour').waitForTask(neighbour, undefined, 60_000);
  expect(done.status).toBe('completed');
  // It ran while the queue still waited: at most one narrow call had finished (one runs at a time, 3 s each).
  const finished = (await Promise.all(queued.map((id) => statusOf(narrow, id)))).filter(
    (s) => s === 'completed',
  );
  expect(finished.length).toBeLessThanOrEqual(1);

  for (const id of queued) expect((await narrow.waitForTask(id, undefined, 60_000)).status).toBe('completed');
  // Never two at once at the upstream: each started once the one before had had its 3 s.
  const starts = ['n0', 'n1', 'n2', 'n3'].map((l) => reached.get(l) as number).sort((a, b) => a - b);
  for (let i = 1; i < starts.length; i++) {
    expect((starts[i] as number) - (starts[i - 1] as number)).toBeGreaterThanOrEqual(2900);
  }
}, 120_000);

test('the slot of a call whose workflow was terminated goes to the next in line', async () => {
  const narrow = gw.clientFor('narrow');
  const holder = await hostedTask(narrow, 60, 'holder');
  const next = await hostedTask(narrow, 0.2, 'next');
  await narrow.waitForTask(next, (_s, t) => /^Queued: position 1/.test(String(t.statusMessage)), 20_000);
  const client = await gw.temporalClient();
  await client.workflow.getHandle(taskWorkflowId(taskKeyOf(holder))).terminate('test: operator ended it');
  // The first in line, finding no slot twice, asks Temporal about the holder and frees its slot.
  const done = await narrow.waitForTask(next, undefined, 90_000);
  expect(done.status).toBe('completed');
}, 120_000);

test('a call whose upstream asks the client lends its slot meanwhile, and runs first again once answered', async () => {
  const narrow = gw.clientFor('narrow');
  const form = { capabilities: TASKS_AND_FORM_CAPS };
  const asked = await narrow.callTool('test_input_required_result_multi_round', {}, form);
  expect(asked.body.result).toMatchObject({ resultType: 'task' });
  const askingId = String(asked.body.result?.taskId);
  await narrow.waitForTask(askingId, (s) => s === 'input_required', 30_000);

  // Nobody answers yet: the queue's only slot is free for the next call.
  const other = await hostedTask(narrow, 0.2, 'while-asking');
  expect((await narrow.waitForTask(other, undefined, 60_000)).status).toBe('completed');
  expect(await statusOf(narrow, askingId)).toBe('input_required');

  for (const [key, content] of [
    ['step1', { name: 'Ada' }],
    ['step2', { color: 'green' }],
  ] as const) {
    await until(
      async () => {
        const current = (await narrow.getTask(askingId, form)).body.result;
        return (
          current?.status === 'input_required' &&
          Object.keys((current.inputRequests ?? {}) as object).includes(key)
        );
      },
      () => `the upstream never asked ${key}`,
    );
    const updated = await narrow.request(
      'tasks/update',
      { taskId: askingId, inputResponses: { [key]: { action: 'accept', content } } },
      form,
    );
    expect(updated.body.error).toBeUndefined();
  }
  const done = await narrow.waitForTask(askingId, undefined, 30_000);
  expect(done.status).toBe('completed');
  expect(JSON.stringify(done.result)).toContain('Ada likes green');
}, 120_000);
