/**
 * The queue of hosted calls (issue 24, docs/hosted-tasks.md): with `hosting.maxConcurrent: 2`, ten
 * hosted calls of a slow ordinary tool never run more than two at once at the upstream, the waiting
 * ones say where they stand, the queue's length is in `/metrics`, and all ten complete across a
 * restart of every process; an upstream asking for input mid-call ends it clearly. Real gateway, Temporal dev server and example upstream (tasks not
 * advertised, so its tools are ordinary), both databases.
 */
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import type { McpTestClient } from '../helpers/mcp-client';
import { TASKS_AND_FORM_CAPS } from '../helpers/mcp-client';
import { metricsText } from '../../src/telemetry/metrics';

const CALLS = 10;
const SECONDS = 2;

let gw: TestGateway;
let client: McpTestClient;
/** When each hosted tools/call reached the upstream (ms). */
const starts: number[] = [];

beforeAll(async () => {
  gw = await startTestGateway({
    upstream: {
      advertiseTasks: false,
      onRequest: (request) => {
        if (request.method === 'tools/call') starts.push(Date.now());
      },
    },
    projects: (url) => [
      {
        slug: 'queued',
        namespacing: false,
        upstreams: [
          {
            alias: 'slow',
            url,
            hosting: {
              tools: ['slow_compute'],
              promoteAfterMs: 0,
              maxConcurrent: 2,
              repeatable: ['slow_compute'],
            },
          },
        ],
      },
      {
        slug: 'asking',
        namespacing: false,
        upstreams: [{ alias: 'example', url, hosting: { tools: ['test_input_required_*'] } }],
      },
    ],
  });
  client = gw.clientFor('queued');
}, 180_000);
afterAll(async () => {
  await gw?.close();
});

test('ten hosted calls through two slots: in order, never more than two at once, across a restart', async () => {
  const created = await Promise.all(
    Array.from({ length: CALLS }, (_, i) =>
      client.callTool('slow_compute', { seconds: SECONDS, label: `q${i}` }),
    ),
  );
  const taskIds = created.map((c) => {
    expect(c.body.result).toMatchObject({ resultType: 'task', status: 'working' });
    return String(c.body.result?.taskId);
  });

  // The waiting calls say so, with their place.
  const deadline = Date.now() + 20_000;
  let positions: string[] = [];
  while (Date.now() < deadline) {
    const snapshots = await Promise.all(taskIds.map((id) => client.getTask(id)));
    positions = snapshots
      .map((s) => String(s.body.result?.statusMessage ?? ''))
      .filter((m) => /^Queued: position \d+/.test(m));
    if (positions.length >= 3) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  expect(positions.length).toBeGreaterThanOrEqual(3);
  expect(positions.join('\n')).toMatch(/runs at most 2 hosted calls at once/);

  // The gateway runs in this process: its registry is the one `/metrics` prints.
  const metrics = await metricsText();
  expect(metrics).toMatch(/taskrouter_hosted_queue_length\{project="queued",upstream="slow"\} [1-9]/);

  // Every process stops and starts again while calls wait and run.
  await gw.stop();
  await gw.start();

  for (const id of taskIds) {
    const done = await client.waitForTask(id, undefined, 120_000);
    expect(done.status).toBe('completed');
  }
  // Each call reached the upstream (an interrupted one may have been sent again: the tool is repeatable).
  expect(starts.length).toBeGreaterThanOrEqual(CALLS);
  // Never a third call while two ran: within any stretch shorter than one call, at most two started.
  const sorted = [...starts].sort((a, b) => a - b);
  for (let i = 2; i < sorted.length; i++) {
    expect((sorted[i] as number) - (sorted[i - 2] as number)).toBeGreaterThanOrEqual(SECONDS * 1000 - 100);
  }
}, 300_000);

test('an upstream that asks for input during a hosted call ends it with a clear error, not a hang', async () => {
  const reply = await gw.clientFor('asking').callTool('test_input_required_result_multi_round', {});
  expect(reply.body.result).toBeUndefined();
  // The gateway declared no elicitation to the upstream, which (conforming) refuses; had it asked anyway,
  // the gateway would end the call itself (activities/hosted-call.ts, ordinaryAnswer).
  expect(reply.body.error?.message).toMatch(/input/);
});

test("a client that declared form answers the upstream's questions through the hosted task, round by round", async () => {
  const asking = gw.clientFor('asking');
  const form = { capabilities: TASKS_AND_FORM_CAPS };
  const created = await asking.callTool('test_input_required_result_multi_round', {}, form);
  expect(created.body.result).toMatchObject({ resultType: 'task', status: 'input_required' });
  const taskId = String(created.body.result?.taskId);
  const answer = async (key: string, content: Record<string, unknown>) => {
    const open = await asking.waitForTask(taskId, (s) => s === 'input_required', 20_000);
    const current = (await asking.getTask(taskId, form)).body.result;
    expect(Object.keys((current?.inputRequests ?? {}) as object)).toEqual([key]);
    expect(open.status).toBe('input_required');
    const updated = await asking.request(
      'tasks/update',
      { taskId, inputResponses: { [key]: { action: 'accept', content } } },
      form,
    );
    expect(updated.body.error).toBeUndefined();
  };
  await answer('step1', { name: 'Ada' });
  // The second round asks anew once the retry with the first answer went upstream.
  await asking.waitForTask(taskId, (s) => s === 'working', 20_000).catch(() => undefined);
  await answer('step2', { color: 'green' });
  const done = await asking.waitForTask(taskId, undefined, 20_000);
  expect(done.status).toBe('completed');
  expect(JSON.stringify(done.result)).toContain('Ada likes green');
});
