/**
 * Ordinary-call processing through the real gateway: the result cache, project response limits (and
 * what they never touch), MRTR round trips and progress relayed on the SSE stream.
 */
import { randomUUID } from 'node:crypto';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { progressToolCall, TASKS_AND_FORM_CAPS } from '../helpers/mcp-client';
import { META } from '../../src/protocol';

let gw: TestGateway;
const LIMIT = 2000;

beforeAll(async () => {
  const project = (slug: string, overflow: string) => (url: string) => ({
    slug,
    namespacing: false,
    upstreams: [{ alias: 'example', url }],
    limits: { maxResultBytes: LIMIT, overflow },
  });
  gw = await startTestGateway({
    projects: (url) => [
      project('trunc', 'truncate')(url),
      project('compact', 'compact')(url),
      project('strict', 'error')(url),
    ],
  });
});
afterAll(async () => {
  await gw?.close();
});

const size = (v: unknown) => Buffer.byteLength(JSON.stringify(v));
type Content = Array<{ type: string; text?: string }>;

describe('result cache', () => {
  test('a read-only tool is served from the cache within its TTL; other arguments miss', async () => {
    const key = randomUUID();
    const before = gw.upstream.stats.toolCalls['lookup'] ?? 0;
    const first = await gw.client.callTool('lookup', { key }, { tasks: false });
    const second = await gw.client.callTool('lookup', { key }, { tasks: false });
    expect(second.body.result?.structuredContent).toEqual(first.body.result?.structuredContent);
    expect(second.body.result?._meta).toMatchObject({ 'com.taskrouter/cache': 'hit' });
    expect(first.body.result?._meta).not.toHaveProperty(['com.taskrouter/cache']);
    expect(gw.upstream.stats.toolCalls['lookup']).toBe(before + 1);

    const other = await gw.client.callTool('lookup', { key: `${key}-2` }, { tasks: false });
    expect(other.body.result?._meta).not.toHaveProperty(['com.taskrouter/cache']);
    expect(gw.upstream.stats.toolCalls['lookup']).toBe(before + 2);
  });

  test('a tool that is not read-only is never cached', async () => {
    const before = gw.upstream.stats.toolCalls['greet'] ?? 0;
    await gw.client.callTool('greet', { name: 'same' }, { tasks: false });
    const again = await gw.client.callTool('greet', { name: 'same' }, { tasks: false });
    expect(again.body.result?._meta).not.toHaveProperty(['com.taskrouter/cache']);
    expect(gw.upstream.stats.toolCalls['greet']).toBe(before + 2);
  });

  test('the task path neither reads nor writes the cache, even for a synchronous answer', async () => {
    const key = randomUUID();
    const before = gw.upstream.stats.toolCalls['lookup'] ?? 0;
    const a = await gw.client.callTool('lookup', { key });
    const b = await gw.client.callTool('lookup', { key });
    expect(a.body.result?.resultType).toBe('complete');
    expect(b.body.result?.structuredContent).not.toEqual(a.body.result?.structuredContent);
    const ordinary = await gw.client.callTool('lookup', { key }, { tasks: false });
    expect(ordinary.body.result?._meta).not.toHaveProperty(['com.taskrouter/cache']);
    expect(gw.upstream.stats.toolCalls['lookup']).toBe(before + 3);
  });
});

describe('response limits', () => {
  test('truncate: a long text keeps head and tail around a visible marker and notes the cut in _meta', async () => {
    const reply = await gw.clientFor('trunc').callTool('report', { chars: 20_000 }, { tasks: false });
    const result = reply.body.result!;
    const text = (result.content as Content)[0]?.text ?? '';
    expect(size(result)).toBeLessThanOrEqual(LIMIT);
    expect(text).toMatch(/^The quick brown fox/);
    expect(text).toMatch(/truncated \d+ characters by TaskRouter/);
    expect(result._meta).toMatchObject({
      'com.taskrouter/responseLimit': { policy: 'truncate', removedChars: expect.any(Number) },
      [META.serverInfo]: { name: 'taskrouter' },
    });
  });

  test('truncate: structured content is never cut mid-value; it is dropped whole when text carries it', async () => {
    const reply = await gw
      .clientFor('trunc')
      .callTool('report', { chars: 20_000, shape: 'structured' }, { tasks: false });
    const result = reply.body.result!;
    expect(size(result)).toBeLessThanOrEqual(LIMIT);
    expect(result).not.toHaveProperty('structuredContent');
    expect(result._meta).toMatchObject({
      'com.taskrouter/responseLimit': { droppedStructuredContent: true },
    });
  });

  test('truncate: mixed content keeps the small block whole and the structured content intact', async () => {
    const reply = await gw
      .clientFor('trunc')
      .callTool('report', { chars: 20_000, shape: 'mixed' }, { tasks: false });
    const result = reply.body.result!;
    const content = result.content as Content;
    expect(content[0]?.text).toBe('Summary: a report in two parts.');
    expect(content[1]?.text).toMatch(/truncated \d+ characters/);
    expect(result.structuredContent).toEqual({ length: 20_000 });
  });

  test('compact: lossless steps first (the duplicate text block goes), structured content untouched', async () => {
    const reply = await gw
      .clientFor('compact')
      .callTool('report', { chars: 1_500, shape: 'structured' }, { tasks: false });
    const result = reply.body.result!;
    expect(size(result)).toBeLessThanOrEqual(LIMIT);
    expect((result.structuredContent as { rows: string[] }).rows.join('')).toHaveLength(1_500);
    expect(result._meta).toMatchObject({
      'com.taskrouter/responseLimit': {
        policy: 'compact',
        compacted: expect.arrayContaining(['drop-duplicate-text']),
      },
    });
  });

  test('error: an oversized result is refused with a clear error', async () => {
    const reply = await gw.clientFor('strict').callTool('report', { chars: 20_000 }, { tasks: false });
    expect(reply.body.error).toMatchObject({ code: -31005, data: { limitBytes: LIMIT } });
  });

  test('a synchronous answer on the task path is limited; a task envelope and tasks/get are not', async () => {
    const client = gw.clientFor('trunc');
    const sync = await client.callTool('report', { chars: 20_000 });
    expect(size(sync.body.result)).toBeLessThanOrEqual(LIMIT);

    const created = await client.callTool('big_task', { chars: 20_000 });
    expect(created.body.result?.resultType).toBe('task');
    const done = await client.waitForTask(String(created.body.result?.taskId));
    const text = ((done.result as { content: Content }).content[0]?.text ?? '') as string;
    expect(text).toHaveLength(20_000);
    expect(done._meta).not.toHaveProperty(['com.taskrouter/responseLimit']);
  });
});

describe('protocol relays', () => {
  test('MRTR: input_required round trip through the gateway on an ordinary call', async () => {
    const caps = { elicitation: { form: {} } };
    const round1 = await gw.client.callTool('confirm_delete', { filename: 'a.txt' }, { capabilities: caps });
    const r1 = round1.body.result!;
    expect(r1.resultType).toBe('input_required');
    expect(Object.keys(r1.inputRequests as object)).toEqual(['confirm']);
    const round2 = await gw.client.request(
      'tools/call',
      {
        name: 'confirm_delete',
        arguments: { filename: 'a.txt' },
        inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
        ...(r1.requestState !== undefined && { requestState: r1.requestState }),
      },
      { capabilities: caps },
    );
    expect(round2.body.result?.resultType).toBe('complete');
    expect(JSON.stringify(round2.body.result?.content)).toContain('Confirmed: deleted a.txt');
  });

  test('MRTR then task: a task-aware retry becomes a gateway task', async () => {
    const round1 = await gw.client.callTool('test_tool_with_task', {}, { capabilities: TASKS_AND_FORM_CAPS });
    expect(round1.body.result?.resultType).toBe('input_required');
    const key = Object.keys(round1.body.result?.inputRequests as object)[0] as string;
    const round2 = await gw.client.request(
      'tools/call',
      {
        name: 'test_tool_with_task',
        arguments: {},
        inputResponses: { [key]: { action: 'accept', content: { name: 'Luca' } } },
        ...(round1.body.result?.requestState !== undefined && {
          requestState: round1.body.result.requestState,
        }),
      },
      { capabilities: TASKS_AND_FORM_CAPS },
    );
    expect(round2.body.result?.resultType).toBe('task');
    const done = await gw.client.waitForTask(String(round2.body.result?.taskId));
    expect(JSON.stringify(done.result)).toContain('Luca');
  });

  test('progress notifications arrive on the SSE stream before the result', async () => {
    const { contentType, messages: events } = await progressToolCall(
      gw.client.url,
      'test_tool_with_progress',
      7,
      'p-1',
    );
    expect(contentType).toMatch(/^text\/event-stream/);
    const progress = events
      .filter((e) => e.method === 'notifications/progress')
      .map((e) => e.params?.progress);
    expect(progress).toEqual([0, 50, 100]);
    expect(events.at(-1)).toMatchObject({ id: 7, result: { resultType: 'complete' } });
  });
});
