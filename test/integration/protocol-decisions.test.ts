/**
 * The doubtful protocol rules of docs/protocol-decisions.md, each proved against the real gateway and the
 * example upstream: `Mcp-Param-*` headers (checked against the exposed tool, re-derived for the
 * upstream), upstream errors about the gateway's own request, and form elicitation declared on the call
 * and on the answer.
 */
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { TASKS_AND_FORM_CAPS, TASKS_CAPS } from '../helpers/mcp-client';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({
    projects: (url) => [
      { slug: 'spaced', namespacing: true, upstreams: [{ alias: 'example', url }] },
      {
        slug: 'gate-off',
        namespacing: false,
        features: { tasks: false },
        upstreams: [{ alias: 'example', url }],
      },
    ],
  });
});
afterAll(async () => {
  await gw?.close();
});

const toolCalls = (name: string) => gw.upstream.stats.toolCalls[name] ?? 0;
const b64 = (text: string) => `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;

describe('Mcp-Param-* headers', () => {
  const args = { region: 'eu-west', priority: 3 };

  test.each([
    ['ordinary path', { tasks: false }],
    ['task path', { capabilities: TASKS_CAPS }],
  ])(
    '%s: checked against the exposed tool; the upstream gets headers derived from its own schema only',
    async (_path, opts) => {
      const client = gw.clientFor('spaced');
      const reply = await client.callTool('example.test_custom_headers', args, {
        ...opts,
        headers: {
          // Equal after decoding (base64 form) and numerically ("3.0"): valid, but not what is forwarded.
          'mcp-param-region': b64('eu-west'),
          'mcp-param-priority': '3.0',
          // Headers the exposed schema does not declare: never forwarded.
          'mcp-param-secret': 'injected',
          'x-custom-header': 'also-injected',
        },
      });
      expect(reply.status).toBe(200);
      expect(reply.body.result).toMatchObject({ content: [{ text: 'region=eu-west priority=3' }] });
      const sent = gw.upstream.stats.lastHeaders ?? {};
      expect(sent['mcp-name']).toBe('test_custom_headers');
      expect(sent['mcp-param-region']).toBe('eu-west');
      expect(sent['mcp-param-priority']).toBe('3');
      expect(sent).not.toHaveProperty('mcp-param-secret');
      expect(sent).not.toHaveProperty('x-custom-header');
    },
  );

  test('a client header that disagrees with the arguments, or is missing, is -32020 and reaches no upstream', async () => {
    const client = gw.clientFor('spaced');
    const before = toolCalls('test_custom_headers');
    const cases: Record<string, string>[] = [
      { 'mcp-param-region': 'us-east', 'mcp-param-priority': '3' },
      { 'mcp-param-priority': '3' },
      { 'mcp-param-region': 'eu-west', 'mcp-param-priority': 'three' },
      { 'mcp-param-region': '=?base64?not base64?=', 'mcp-param-priority': '3' },
    ];
    for (const headers of cases) {
      for (const opts of [{ tasks: false }, { capabilities: TASKS_CAPS }]) {
        const reply = await client.callTool('example.test_custom_headers', args, { ...opts, headers });
        expect(reply.status).toBe(400);
        expect(reply.body.error?.code).toBe(-32020);
      }
    }
    // A declared header sent without its argument.
    const stray = await client.callTool(
      'example.test_custom_headers',
      { priority: 1 },
      {
        tasks: false,
        headers: { 'mcp-param-priority': '1', 'mcp-param-region': 'eu-west' },
      },
    );
    expect(stray.body.error?.code).toBe(-32020);
    expect(toolCalls('test_custom_headers')).toBe(before);
  });

  test('a tool that declares no headers ignores the client’s and forwards none', async () => {
    const reply = await gw.client.callTool(
      'greet',
      { name: 'h' },
      {
        tasks: false,
        headers: { 'mcp-param-region': 'anything' },
      },
    );
    expect(reply.status).toBe(200);
    expect(gw.upstream.stats.lastHeaders).not.toHaveProperty('mcp-param-region');
  });
});

describe("upstream errors about the gateway's own request", () => {
  const upstreamRejected = (reply: Awaited<ReturnType<typeof gw.client.callTool>>, code: number) => {
    expect(reply.status).toBe(502);
    expect(reply.body.error).toMatchObject({
      code: -31011,
      message: expect.stringContaining('"example"'),
      data: { upstream: 'example', upstreamError: { code } },
    });
  };

  test.each([
    ['headers', -32020],
    ['version', -32022],
  ])('-32020/-32022 (%s) become -31011 naming the upstream, on both paths', async (kind, code) => {
    upstreamRejected(await gw.client.callTool('refuse_request', { kind }, { tasks: false }), code);
    upstreamRejected(
      await gw.client.callTool('refuse_request', { kind }, { capabilities: TASKS_CAPS }),
      code,
    );
  });

  test('-32021 for a capability the client lacks is relayed with requiredCapabilities', async () => {
    const reply = await gw.client.callTool('refuse_request', { kind: 'capability' }, { tasks: false });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { sampling: {} } },
    });
    // The same client capability on the task path: the gateway's hop lacks it, the client does too.
    const task = await gw.client.callTool(
      'refuse_request',
      { kind: 'capability' },
      { capabilities: TASKS_CAPS },
    );
    expect(task.body.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: {} } } });
    // And the conformance fixture, as the suite probes it.
    const fixture = await gw.client.callTool('test_missing_capability', {}, { tasks: false });
    expect(fixture.status).toBe(400);
    expect(fixture.body.error?.code).toBe(-32021);
  });

  test('-32021 for a capability the client declared but the gateway left out is -31011', async () => {
    const declared = { sampling: {} };
    // Ordinary path: the client's capabilities are forwarded, so the upstream is satisfied.
    const ordinary = await gw.client.callTool(
      'refuse_request',
      { kind: 'capability' },
      { capabilities: declared },
    );
    expect(ordinary.body.result).toMatchObject({ content: [{ text: 'sampling declared' }] });
    // Task path: the gateway declares its own capabilities (Tasks, form elicitation), not sampling.
    const task = await gw.client.callTool(
      'refuse_request',
      { kind: 'capability' },
      { capabilities: { ...TASKS_CAPS, ...declared } },
    );
    upstreamRejected(task, -32021);
    // The Tasks extension, declared by the client, dropped by a project whose Tasks gate is off.
    const gated = await gw
      .clientFor('gate-off')
      .callTool('refuse_request', { kind: 'capability', capability: 'tasks' }, { capabilities: TASKS_CAPS });
    upstreamRejected(gated, -32021);
  });

  test('-32021 naming Tasks for a client that cannot take tasks is still absorbed by an inline task', async () => {
    const reply = await gw.client.callTool(
      'refuse_request',
      { kind: 'capability', capability: 'tasks' },
      { tasks: false },
    );
    expect(reply.status).toBe(200);
    expect(reply.body.result).toMatchObject({ content: [{ text: 'tasks declared' }] });
  });
});

describe('form elicitation: the original call and the answer must both declare it', () => {
  const answer = { need: { action: 'accept', content: { ok: true } } };

  test('declared on the call only: the input is relayed, an answer without the declaration is -32021', async () => {
    const created = await gw.client.callTool(
      'ask_unsupported',
      { kind: 'form' },
      { capabilities: TASKS_AND_FORM_CAPS },
    );
    const taskId = String(created.body.result?.taskId);
    const asking = await gw.client.waitForTask(taskId, (s) => s === 'input_required');
    expect(Object.keys(asking.inputRequests as object)).toEqual(['need']);
    const updates = gw.upstream.stats.tasksUpdate;
    const refused = await gw.client.request('tasks/update', { taskId, inputResponses: answer });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { elicitation: { form: {} } } },
    });
    expect(gw.upstream.stats.tasksUpdate).toBe(updates);
    // Declared on both: the answer goes through and the task completes.
    const ack = await gw.client.request(
      'tasks/update',
      { taskId, inputResponses: answer },
      { capabilities: TASKS_AND_FORM_CAPS },
    );
    expect(ack.body.result).toMatchObject({ resultType: 'complete' });
    expect((await gw.client.waitForTask(taskId)).status).toBe('completed');
  });

  test('declared on the answer only: the input is never relayed, the task fails, the answer does nothing', async () => {
    const cancels = gw.upstream.stats.tasksCancel;
    const created = await gw.client.callTool(
      'ask_unsupported',
      { kind: 'form' },
      { capabilities: TASKS_CAPS },
    );
    const taskId = String(created.body.result?.taskId);
    const done = await gw.client.waitForTask(taskId);
    expect(done).toMatchObject({
      status: 'failed',
      error: { code: -32603, data: { unsupportedInputRequests: [expect.stringContaining('need')] } },
    });
    expect(gw.upstream.stats.tasksCancel).toBe(cancels + 1);
    const updates = gw.upstream.stats.tasksUpdate;
    const late = await gw.client.request(
      'tasks/update',
      { taskId, inputResponses: answer },
      { capabilities: TASKS_AND_FORM_CAPS },
    );
    expect(late.body.result).toMatchObject({ resultType: 'complete' });
    expect(gw.upstream.stats.tasksUpdate).toBe(updates);
  });

  test('an upstream that checks the call’s declaration refuses it; the client hears its own omission', async () => {
    const reply = await gw.client.callTool('confirm_delete', { filename: 'x' }, { capabilities: TASKS_CAPS });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { elicitation: { form: {} } } },
    });
  });
});
