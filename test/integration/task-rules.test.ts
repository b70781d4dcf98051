/**
 * The task path's product rules against real upstream behaviour: qualification, cancellation that the
 * upstream honours or not, input the gateway cannot relay, TTL expiry, a forgotten task, re-published
 * metadata and the upstream id never leaking.
 */
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { McpTestClient, TASKS_AND_FORM_CAPS, TASKS_CAPS } from '../helpers/mcp-client';

let gw: TestGateway;
const DISCOVER_TTL_MS = 150;
const discoveryExpires = () => new Promise((r) => setTimeout(r, DISCOVER_TTL_MS + 50));

beforeAll(async () => {
  const project = (slug: string, extra: Record<string, unknown>) => (url: string) => ({
    slug,
    namespacing: false,
    upstreams: [{ alias: 'example', url }],
    ...extra,
  });
  // A short discovery TTL, so the gateway sees the upstream stop advertising Tasks within the test.
  gw = await startTestGateway({
    upstream: { discoverTtlMs: DISCOVER_TTL_MS },
    projects: (url) => [
      project('gate-off', { features: { tasks: false } })(url),
      project('standard', { toolProfile: 'standard' })(url),
    ],
  });
});
afterAll(async () => {
  await gw?.close();
});

async function taskOf(tool: string, args: Record<string, unknown> = {}, caps = TASKS_CAPS): Promise<string> {
  const reply = await gw.client.callTool(tool, args, { capabilities: caps });
  expect(reply.body.result?.resultType).toBe('task');
  return String(reply.body.result?.taskId);
}

describe('qualification: each condition off sends the call down the ordinary path', () => {
  test('client does not declare Tasks', async () => {
    const r = await gw.client.callTool('slow_compute', { seconds: 0, label: 'q' }, { tasks: false });
    expect(r.body.result?.resultType).toBe('complete');
  });

  test('project Tasks gate off', async () => {
    const r = await gw.clientFor('gate-off').callTool('slow_compute', { seconds: 0, label: 'q' });
    expect(r.body.result?.resultType).toBe('complete');
    const discover = await gw.clientFor('gate-off').request('server/discover');
    expect(discover.body.result?.capabilities).not.toHaveProperty('extensions');
  });

  test('tool profile without Tasks', async () => {
    const r = await gw.clientFor('standard').callTool('slow_compute', { seconds: 0, label: 'q' });
    expect(r.body.result?.resultType).toBe('complete');
  });

  test('upstream stops advertising Tasks (its current discovery is used)', async () => {
    gw.upstream.setAdvertiseTasks(false);
    try {
      await discoveryExpires();
      const r = await gw.client.callTool('slow_compute', { seconds: 0, label: 'q' });
      expect(r.body.result?.resultType).toBe('complete');
    } finally {
      gw.upstream.setAdvertiseTasks(true);
      await discoveryExpires();
    }
  });
});

describe('cancellation', () => {
  test('an upstream that honours cancel ends cancelled', async () => {
    const taskId = await taskOf('slow_compute', { seconds: 30, label: 'c' });
    const ack = await gw.client.request('tasks/cancel', { taskId });
    expect(ack.body.result).toMatchObject({ resultType: 'complete' });
    expect((await gw.client.waitForTask(taskId)).status).toBe('cancelled');
  });

  test('an upstream that finishes anyway ends completed, as it reports', async () => {
    const taskId = await taskOf('stubborn_job', { seconds: 1 });
    const ack = await gw.client.request('tasks/cancel', { taskId });
    expect(ack.body.result).toMatchObject({ resultType: 'complete' });
    const done = await gw.client.waitForTask(taskId);
    expect(done.status).toBe('completed');
    expect(JSON.stringify(done.result)).toContain('Finished regardless');
  });

  test('an upstream that no longer offers Tasks makes tasks/cancel an error, not a pretend cancel', async () => {
    const taskId = await taskOf('slow_compute', { seconds: 30, label: 'no-cancel' });
    const cancelsBefore = gw.upstream.stats.tasksCancel;
    gw.upstream.setAdvertiseTasks(false);
    await discoveryExpires();
    try {
      const reply = await gw.client.request('tasks/cancel', { taskId });
      expect(reply.body.error).toMatchObject({ code: -31008, message: expect.stringContaining('"example"') });
      expect(gw.upstream.stats.tasksCancel).toBe(cancelsBefore);
      expect((await gw.client.getTask(taskId)).body.result?.status).toBe('working');
    } finally {
      gw.upstream.setAdvertiseTasks(true);
      await discoveryExpires();
    }
    await gw.client.request('tasks/cancel', { taskId });
  });
});

describe('input requests', () => {
  test.each(['sampling', 'url', 'roots'])(
    'an upstream asking for %s input ends the task failed with a clear error, upstream task cancelled',
    async (kind) => {
      const cancels = gw.upstream.stats.tasksCancel;
      const taskId = await taskOf('ask_unsupported', { kind }, TASKS_AND_FORM_CAPS);
      const done = await gw.client.waitForTask(taskId);
      expect(done).toMatchObject({
        status: 'failed',
        error: { code: -32603, message: expect.stringContaining('cannot relay through a task') },
      });
      expect(gw.upstream.stats.tasksCancel).toBe(cancels + 1);
    },
  );

  test('tasks/update is refused when the upstream no longer offers Tasks', async () => {
    const taskId = await taskOf('confirm_delete', { filename: 'g' }, TASKS_AND_FORM_CAPS);
    await gw.client.waitForTask(taskId, (s) => s === 'input_required');
    const updates = gw.upstream.stats.tasksUpdate;
    gw.upstream.setAdvertiseTasks(false);
    await discoveryExpires();
    try {
      const reply = await gw.client.request(
        'tasks/update',
        { taskId, inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } },
        { capabilities: TASKS_AND_FORM_CAPS },
      );
      expect(reply.body.error).toMatchObject({ code: -31008 });
      expect(gw.upstream.stats.tasksUpdate).toBe(updates);
    } finally {
      gw.upstream.setAdvertiseTasks(true);
      await discoveryExpires();
    }
    await gw.client.request('tasks/cancel', { taskId });
  });

  test('form elicitation the original call did not declare is not relayed either', async () => {
    // confirm_delete refuses calls without form elicitation, so use multi_input with form declared and
    // check the opposite case through the declared path: answers flow only when both sides declared form.
    const taskId = await taskOf('confirm_delete', { filename: 'f' }, TASKS_AND_FORM_CAPS);
    await gw.client.waitForTask(taskId, (s) => s === 'input_required');
    const withoutForm = await gw.client.request('tasks/update', {
      taskId,
      inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
    });
    expect(withoutForm.body.error?.code).toBe(-32021);
    expect((await gw.client.getTask(taskId)).body.result?.status).toBe('input_required');
    await gw.client.request('tasks/cancel', { taskId });
  });
});

describe('TTL and forgotten tasks', () => {
  test("past the upstream's ttlMs without a terminal status the task fails; it never reads as done", async () => {
    const taskId = await taskOf('eternal_job', { ttlMs: 600 });
    const done = await gw.client.waitForTask(taskId, undefined, 20_000);
    expect(done).toMatchObject({
      status: 'failed',
      error: { message: expect.stringContaining('time to live') },
    });
  });

  test('a task the upstream forgets fails with a clear error', async () => {
    const taskId = await taskOf('forgetful_job', { seconds: 0.3 });
    const done = await gw.client.waitForTask(taskId);
    expect(done).toMatchObject({
      status: 'failed',
      error: { message: expect.stringContaining('no longer knows') },
    });
  });

  test("a terminal snapshot stays readable after the upstream's TTL elapsed and it forgot the task", async () => {
    // Long enough for a loaded machine's first poll to find the task still known (it ends at once).
    const taskId = await taskOf('short_lived', { ttlMs: 1500 });
    await gw.client.waitForTask(taskId);
    await new Promise((r) => setTimeout(r, 1600));
    // The upstream itself no longer knows the task…
    const upstreamId = gw.upstream.stats.taskIds.at(-1) as string;
    const direct = await new McpTestClient(gw.upstream.url).getTask(upstreamId);
    expect(direct.body.error?.code).toBe(-32602);
    // …but the gateway still answers with the retained terminal snapshot.
    const again = await gw.client.getTask(taskId);
    expect(again.body.result).toMatchObject({ status: 'completed' });
    expect(JSON.stringify(again.body.result?.result)).toContain('Short but complete');
  });

  test('a terminal snapshot stays readable after the upstream has forgotten the task', async () => {
    const taskId = await taskOf('slow_compute', { seconds: 0, label: 'kept' });
    await gw.client.waitForTask(taskId);
    // The upstream's own TTL is irrelevant now: the gateway answers from its store.
    const again = await gw.client.getTask(taskId);
    expect(again.body.result).toMatchObject({ status: 'completed' });
    expect(JSON.stringify(again.body.result?.result)).toContain('kept');
  });
});

describe('re-published metadata', () => {
  test('extension fields and task _meta are kept, the upstream identity and id are not', async () => {
    const reply = await gw.client.callTool('chatty_job', {});
    const created = reply.body.result!;
    const taskId = String(created.taskId);
    expect(created).toMatchObject({
      'com.example/progressPercent': 42,
      statusMessage: `Working on ${taskId}`,
      _meta: { 'com.example/trace': 'trace-1', 'io.modelcontextprotocol/serverInfo': { name: 'taskrouter' } },
    });
    expect(created._meta).not.toHaveProperty(['io.modelcontextprotocol/related-task']);
    const done = await gw.client.waitForTask(taskId);
    expect(JSON.stringify(done.result)).toContain(`Done with ${taskId}`);
    const upstreamId = gw.upstream.stats.taskIds.at(-1) as string;
    expect(JSON.stringify([created, done])).not.toContain(upstreamId);
  });
});
