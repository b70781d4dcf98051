/**
 * Control-plane changes announced on `subscriptions/listen`: an upstream added, disabled, enabled or
 * removed through the admin API of one API replica, or a project setting that reshapes the exposed tools,
 * reaches a listen stream on *another* replica as `notifications/{tools,prompts}/list_changed`; that
 * replica re-lists the new configuration at once (its control-plane cache is dropped before the
 * notification: the replica is started with an hour between its own change checks, so nothing else would
 * refresh it), and the stream's upstream watches follow the change (the added upstream is watched, a
 * disabled or removed one no longer). Real gateway processes (two API replicas, one worker), the
 * Temporal dev server, example upstreams over HTTP, SQLite and PostgreSQL.
 */
import type { ExampleUpstream } from '../../examples/upstream/server';
import { startExampleUpstream } from '../../examples/upstream/server';
import type { Runtime } from '../../src/main/runtime';
import { META } from '../../src/protocol';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway, startApiReplica } from '../helpers/gateway';
import { isAck, listen, untilSeen } from '../helpers/listen';
import { McpTestClient } from '../helpers/mcp-client';
import { adminCall } from '../helpers/admin-api';

const ADMIN_TOKEN = 'control-plane-push-admin-token-0123456789';

let extra: ExampleUpstream;
let gw: TestGateway;
let second: Runtime;
let onSecond: McpTestClient;
let keeper: Awaited<ReturnType<typeof listen>> | undefined;
beforeAll(async () => {
  extra = await startExampleUpstream({ name: 'extra-upstream' });
  gw = await startTestGateway({
    projects: (url) => [{ slug: 'cp', namespacing: true, upstreams: [{ alias: 'a', url }] }],
    config: { admin: { token: ADMIN_TOKEN } },
  });
  second = await startApiReplica(gw, {
    // Its own check for control-plane changes would come only after the test: what it serves after a
    // notification can only be new because the notification's row made it drop its cache.
    changeCheckEveryMs: 3_600_000,
  });
  onSecond = new McpTestClient(`${String(second.url)}/v1/mcp/cp`);
  // A stream kept open for the whole file keeps the second replica's watch on upstream `a` running. A
  // watch that starts again while the previous one's lease is still being released announces every list
  // kind once (src/api/mcp/list-feed.ts: nothing changed in a gap is lost); without this stream each
  // test's stream would start that watch anew and could hear that announcement on top of the change under
  // test (seen on PostgreSQL, where the release is slower).
  keeper = await listen(onSecond.url, { toolsListChanged: true, promptsListChanged: true });
  await keeper.handle.next(isAck);
  await untilSeen(() => gw.upstream.listenStreams() === 1);
});
afterAll(async () => {
  keeper?.handle.close();
  await second?.close();
  await gw?.close();
  await extra?.close();
});

/** The admin API of the *first* replica (the stream under test is on the second). */
async function admin(method: string, path: string, body?: unknown): Promise<number> {
  return (await adminCall(String(gw.runtime().url), ADMIN_TOKEN, method, path, body)).status;
}

const changed = (kind: string) => (m: Record<string, unknown>) =>
  m.method === `notifications/${kind}/list_changed`;
async function toolNames(): Promise<string[]> {
  const reply = await onSecond.request('tools/list');
  return (reply.body.result?.tools as { name: string }[]).map((t) => t.name);
}

test('an upstream added on one replica is announced to a stream on another, which re-lists it at once and watches it from then on', async () => {
  const { handle } = await listen(onSecond.url, { toolsListChanged: true, promptsListChanged: true });
  try {
    const ack = await handle.next(isAck);
    expect((ack.params as { notifications: object }).notifications).toEqual({
      toolsListChanged: true,
      promptsListChanged: true,
    });
    expect((await toolNames()).some((n) => n.startsWith('b.'))).toBe(false);

    expect(await admin('POST', '/projects/cp/upstreams', { alias: 'b', url: extra.url })).toBe(201);
    const note = await handle.next(changed('tools'));
    expect(note.params).toEqual({ _meta: { [META.subscriptionId]: 'L1' } });
    await handle.next(changed('prompts'));
    // Resources were not asked for: never sent.
    expect(handle.messages.some(changed('resources'))).toBe(false);
    expect(await toolNames()).toContain('b.greet');

    // The stream's replica now watches the new upstream too, so the new upstream's own change arrives.
    await untilSeen(() => extra.listenStreams() === 1);
    const seen = handle.messages.filter(changed('tools')).length;
    extra.addTool({ name: 'late_tool', inputSchema: { type: 'object' } });
    await untilSeen(() => handle.messages.filter(changed('tools')).length > seen);
    expect(await toolNames()).toContain('b.late_tool');

    expect(await admin('DELETE', '/projects/cp/upstreams/b')).toBe(204);
    await untilSeen(() => handle.messages.filter(changed('tools')).length > seen + 1);
    expect((await toolNames()).some((n) => n.startsWith('b.'))).toBe(false);
    // Removed: no longer watched.
    await untilSeen(() => extra.listenStreams() === 0);
  } finally {
    handle.close();
  }
});

// The second replica sees a change only through a stream's feed (its own check is an hour away), so
// every change below is made while a stream is open there.
test('disabling, enabling and removing an upstream are each announced, and the watch on it follows', async () => {
  const { handle } = await listen(onSecond.url, { toolsListChanged: true });
  const count = () => handle.messages.filter(changed('tools')).length;
  try {
    await handle.next(isAck);
    expect(await admin('POST', '/projects/cp/upstreams', { alias: 'c', url: extra.url })).toBe(201);
    await untilSeen(() => count() === 1);
    await untilSeen(() => extra.listenStreams() === 1);
    expect(await toolNames()).toContain('c.greet');

    expect(await admin('PATCH', '/projects/cp/upstreams/c', { enabled: false })).toBe(200);
    await untilSeen(() => count() === 2);
    expect(await toolNames()).not.toContain('c.greet');
    await untilSeen(() => extra.listenStreams() === 0);

    expect(await admin('PATCH', '/projects/cp/upstreams/c', { enabled: true })).toBe(200);
    await untilSeen(() => count() === 3);
    expect(await toolNames()).toContain('c.greet');
    await untilSeen(() => extra.listenStreams() === 1);

    expect(await admin('DELETE', '/projects/cp/upstreams/c')).toBe(204);
    await untilSeen(() => count() === 4);
    expect(await toolNames()).not.toContain('c.greet');
    await untilSeen(() => extra.listenStreams() === 0);
    // The stream still hears the remaining upstream's own changes.
    gw.upstream.addTool({ name: 'still_heard', inputSchema: { type: 'object' } });
    await untilSeen(() => count() === 5);
    expect(await toolNames()).toContain('a.still_heard');
  } finally {
    handle.close();
  }
});

test('a project setting that renames the exposed tools is announced; one that does not is not', async () => {
  const { handle } = await listen(onSecond.url, { toolsListChanged: true, promptsListChanged: true });
  try {
    await handle.next(isAck);
    expect(await toolNames()).toContain('a.greet');
    // Limits do not change any list: no row. Namespacing does: tools and prompts. The rows are read in
    // order, so once the namespacing change has arrived, a notification for the limits change would have.
    expect(await admin('PATCH', '/projects/cp', { limits: { maxResultBytes: 900_000 } })).toBe(200);
    expect(await admin('PATCH', '/projects/cp', { namespacing: false })).toBe(200);
    await handle.next(changed('tools'));
    await handle.next(changed('prompts'));
    expect(handle.messages.filter(changed('tools'))).toHaveLength(1);
    expect(await toolNames()).toContain('greet');
    expect(await toolNames()).not.toContain('a.greet');

    expect(await admin('PATCH', '/projects/cp', { namespacing: true })).toBe(200);
    await untilSeen(() => handle.messages.filter(changed('tools')).length === 2);
    expect(await toolNames()).toContain('a.greet');
  } finally {
    handle.close();
  }
});

test('a control-plane change made before a stream joined is not announced to it', async () => {
  // Written before the listen below: a row the new stream must not hear (it lists afresh anyway).
  expect(await admin('PATCH', '/projects/cp', { toolProfile: 'standard' })).toBe(200);
  const { handle } = await listen(onSecond.url, { toolsListChanged: true });
  try {
    await handle.next(isAck);
    expect(await admin('PATCH', '/projects/cp', { toolProfile: 'tasks' })).toBe(200);
    await handle.next(changed('tools'));
    expect(handle.messages.filter(changed('tools'))).toHaveLength(1);
  } finally {
    handle.close();
  }
});
