/**
 * Upstreams' list changes relayed on `subscriptions/listen`: the replica holding the watch on an upstream
 * writes the change to the store, and a stream on another API replica hears
 * `notifications/tools/list_changed`; re-listing shows the new tool. The acknowledgement and
 * `server/discover` name only the kinds some upstream of the project announces. Real gateway processes
 * (two API replicas, one worker), Temporal dev server, example upstreams over HTTP.
 */
import type { ExampleUpstream } from '../../examples/upstream/server';
import { startExampleUpstream } from '../../examples/upstream/server';
import type { Runtime } from '../../src/main/runtime';
import { META } from '../../src/protocol';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway, startApiReplica } from '../helpers/gateway';
import { isAck, listen, untilSeen } from '../helpers/listen';
import { McpTestClient } from '../helpers/mcp-client';

let plainUpstream: ExampleUpstream;
let gw: TestGateway;
let second: Runtime;
beforeAll(async () => {
  // Serves only the tasks tools and announces no list changes (`tools: {}` in server/discover).
  plainUpstream = await startExampleUpstream({ conformanceFixtures: false });
  gw = await startTestGateway({
    projects: () => [
      { slug: 'plain', namespacing: false, upstreams: [{ alias: 'plain', url: plainUpstream.url }] },
    ],
  });
  second = await startApiReplica(gw);
});
afterAll(async () => {
  await second?.close();
  await gw?.close();
  await plainUpstream?.close();
});

const ASK_ALL = { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true };
const isToolsChanged = (m: Record<string, unknown>) => m.method === 'notifications/tools/list_changed';

test('a tools list change reaches a stream on another API replica than the watcher, after which re-listing shows the new tool', async () => {
  // The first replica's stream comes first, so that replica takes the watch on the upstream.
  const first = await listen(gw.client.url, ASK_ALL);
  const other = await listen(`${String(second.url)}/v1/mcp/demo`, { toolsListChanged: true });
  try {
    const firstAck = await first.handle.next(isAck);
    expect((firstAck.params as { notifications: object }).notifications).toEqual({
      toolsListChanged: true,
      promptsListChanged: true,
    });
    const otherAck = await other.handle.next(isAck);
    expect((otherAck.params as { notifications: object }).notifications).toEqual({ toolsListChanged: true });
    await untilSeen(() => gw.upstream.listenStreams() === 1);

    const before = await new McpTestClient(`${String(second.url)}/v1/mcp/demo`).request('tools/list');
    const names = (r: typeof before) => (r.body.result?.tools as { name: string }[]).map((t) => t.name);
    expect(names(before)).not.toContain('pushed_tool');

    gw.upstream.addTool({
      name: 'pushed_tool',
      description: 'Added at run time',
      inputSchema: { type: 'object' },
    });

    const note = await other.handle.next(isToolsChanged);
    expect(note.params).toEqual({ _meta: { [META.subscriptionId]: 'L1' } });
    await first.handle.next(isToolsChanged);
    // One upstream stream for both replicas: the second replica's stream heard it through the store.
    expect(gw.upstream.listenStreams()).toBe(1);
    // Only the kinds each stream asked for, and only once per change.
    expect(
      other.handle.messages
        .filter(
          (m) => typeof m.method === 'string' && m.method !== 'notifications/subscriptions/acknowledged',
        )
        .map((m) => m.method),
    ).toEqual(['notifications/tools/list_changed']);

    const after = await new McpTestClient(`${String(second.url)}/v1/mcp/demo`).request('tools/list');
    expect(names(after)).toContain('pushed_tool');
  } finally {
    first.handle.close();
    other.handle.close();
  }
  // With no stream left, the watch ends and the upstream stream is closed.
  await untilSeen(() => gw.upstream.listenStreams() === 0);
});

test('the acknowledgement comes once the upstream is watched: a change made right after it is heard', async () => {
  const { handle } = await listen(gw.client.url, { toolsListChanged: true });
  try {
    await handle.next(isAck);
    // No waiting for the watch: the client may change the upstream the moment it is acknowledged.
    expect(gw.upstream.listenStreams()).toBe(1);
    gw.upstream.addTool({ name: 'right_after_ack', inputSchema: { type: 'object' } });
    await handle.next(isToolsChanged);
  } finally {
    handle.close();
  }
  await untilSeen(() => gw.upstream.listenStreams() === 0);
});

test("the replica drops its cached copy of the upstream's tools list before telling its streams", async () => {
  const { handle } = await listen(gw.client.url, { toolsListChanged: true });
  try {
    await handle.next(isAck);
    await untilSeen(() => gw.upstream.listenStreams() === 1);
    // Routing a call reads the upstream's tools list once, then from the cache (60 s by its ttlMs).
    const lists = () => gw.upstream.stats.requests['tools/list'] ?? 0;
    await gw.client.callTool('greet', { name: 'a' });
    const cached = lists();
    await gw.client.callTool('greet', { name: 'b' });
    expect(lists()).toBe(cached);

    gw.upstream.addTool({ name: 'pushed_again', inputSchema: { type: 'object' } });
    await handle.next(isToolsChanged);
    await gw.client.callTool('greet', { name: 'c' });
    expect(lists()).toBe(cached + 1);
  } finally {
    handle.close();
  }
  await untilSeen(() => gw.upstream.listenStreams() === 0);
});

test('when the watching replica has no stream left, another replica with streams takes the watch over and loses no change', async () => {
  const watching = await listen(gw.client.url, { toolsListChanged: true });
  await watching.handle.next(isAck);
  await untilSeen(() => gw.upstream.listenStreams() === 1);
  const other = await listen(`${String(second.url)}/v1/mcp/demo`, { toolsListChanged: true });
  try {
    await other.handle.next(isAck);
    // The first replica gives the watch up; the second takes it over and, since the upstream went
    // unwatched for a moment, tells its stream to re-list once.
    watching.handle.close();
    await other.handle.next(isToolsChanged);
    await untilSeen(() => gw.upstream.listenStreams() === 1);
    const seen = other.handle.messages.filter(isToolsChanged).length;

    gw.upstream.addTool({ name: 'after_takeover', inputSchema: { type: 'object' } });
    await untilSeen(() => other.handle.messages.filter(isToolsChanged).length > seen);
    const after = await new McpTestClient(`${String(second.url)}/v1/mcp/demo`).request('tools/list');
    expect((after.body.result?.tools as { name: string }[]).map((t) => t.name)).toContain('after_takeover');
  } finally {
    other.handle.close();
  }
  await untilSeen(() => gw.upstream.listenStreams() === 0);
});

test('server/discover announces listChanged for the kinds some upstream announces, and resource updates as the upstream does', async () => {
  const reply = await gw.client.request('server/discover', {});
  const caps = reply.body.result?.capabilities as Record<string, Record<string, unknown> | undefined>;
  expect(caps.tools).toEqual({ listChanged: true });
  expect(caps.prompts).toEqual({ listChanged: true });
  // The example upstream announces resource updates (relayed: test/integration/resource-push.test.ts),
  // not resources list changes.
  expect(caps.resources).toEqual({ subscribe: true });
});

test('a project whose upstreams announce no list changes acknowledges none and advertises none', async () => {
  const url = gw.client.url.replace(/\/demo$/, '/plain');
  const { handle } = await listen(url, ASK_ALL);
  try {
    const ack = await handle.next(isAck);
    expect((ack.params as { notifications: object }).notifications).toEqual({});
  } finally {
    handle.close();
  }
  expect(plainUpstream.listenStreams()).toBe(0);
  const reply = await new McpTestClient(url).request('server/discover', {});
  const caps = reply.body.result?.capabilities as Record<string, Record<string, unknown> | undefined>;
  expect(caps.tools).toEqual({});
  expect(caps.prompts).toBeUndefined();
});
