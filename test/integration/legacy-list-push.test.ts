/**
 * List changes of 2025-era upstreams relayed on `subscriptions/listen`: the official SDK 1.x server,
 * stateful, announces `tools/list_changed` on a session's GET stream; the gateway's watch opens a
 * session of its own for it, and a stream on *another* API replica hears the change and re-lists the new
 * tool there. A stateless SDK server keeps no session, so it cannot announce changes and is promised
 * nothing. Real gateway processes (two API replicas, one worker), the Temporal dev server, SDK 1.x
 * servers over HTTP, SQLite and PostgreSQL.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Runtime } from '../../src/main/runtime';
import { META } from '../../src/protocol';
import type { Sdk1Upstream } from '../fixtures/sdk1-upstream';
import { startSdk1Upstream } from '../fixtures/sdk1-upstream';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway, startApiReplica } from '../helpers/gateway';
import { isAck, listen, untilSeen } from '../helpers/listen';
import { McpTestClient } from '../helpers/mcp-client';

let stateful: Sdk1Upstream;
let stateless: Sdk1Upstream;
let gw: TestGateway;
let second: Runtime;
beforeAll(async () => {
  [stateful, stateless] = await Promise.all([startSdk1Upstream('stateful'), startSdk1Upstream('stateless')]);
  gw = await startTestGateway({
    projects: () => [
      { slug: 'sdk', namespacing: false, upstreams: [{ alias: 'sdk', url: stateful.url }] },
      { slug: 'sdkless', namespacing: false, upstreams: [{ alias: 'sdkless', url: stateless.url }] },
    ],
  });
  second = await startApiReplica(gw);
});
afterAll(async () => {
  await second?.close();
  await gw?.close();
  await Promise.all([stateful?.close(), stateless?.close()]);
});

const toolsChanged = (m: Record<string, unknown>) => m.method === 'notifications/tools/list_changed';
const ASK_ALL = { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true };

test("a stateful SDK 1.x upstream's tools list change reaches a stream on another replica, which re-lists the new tool", async () => {
  const onFirst = gw.clientFor('sdk');
  const onSecond = new McpTestClient(`${String(second.url)}/v1/mcp/sdk`);
  // The first replica's stream comes first, so that replica takes the watch on the upstream.
  const first = await listen(onFirst.url, ASK_ALL);
  const other = await listen(onSecond.url, { toolsListChanged: true });
  try {
    const ack = await first.handle.next(isAck);
    // The SDK server declares listChanged for tools, prompts and resources.
    expect((ack.params as { notifications: object }).notifications).toEqual(ASK_ALL);
    await other.handle.next(isAck);
    const names = async () =>
      ((await onSecond.request('tools/list')).body.result?.tools as { name: string }[]).map((t) => t.name);
    expect(await names()).not.toContain('pushed_0');

    // The watch's GET stream opens after the acknowledgement: a change made before it is not the SDK's
    // to deliver, so changes are made until one arrives (each one a new tool).
    let added = 0;
    while (!other.handle.messages.some(toolsChanged)) {
      stateful.addTool(`pushed_${added++}`);
      await sleep(100);
    }
    const note = other.handle.messages.find(toolsChanged);
    expect(note?.params).toEqual({ _meta: { [META.subscriptionId]: 'L1' } });
    expect(await names()).toContain(`pushed_${added - 1}`);
    await first.handle.next(toolsChanged);
  } finally {
    first.handle.close();
    other.handle.close();
  }
  // With no stream left the watch stops and ends its own session.
  const deletes = stateful.stats.deletes;
  await untilSeen(() => stateful.stats.deletes > deletes);
});

test('a stateless SDK 1.x upstream keeps no session to announce changes on: nothing is promised or advertised', async () => {
  const client = gw.clientFor('sdkless');
  const { handle } = await listen(client.url, ASK_ALL);
  try {
    const ack = await handle.next(isAck);
    expect((ack.params as { notifications: object }).notifications).toEqual({});
  } finally {
    handle.close();
  }
  const caps = (await client.request('server/discover', {})).body.result?.capabilities as Record<
    string,
    Record<string, unknown> | undefined
  >;
  expect(caps.tools).toEqual({});
  expect(stateless.stats.openGets).toBe(0);
});
