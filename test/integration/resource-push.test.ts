/**
 * Resource updates relayed on `subscriptions/listen` (`resourceSubscriptions`): the replica holding a
 * client's stream opens the upstream's own listen for the URIs it serves, with the caller's credential,
 * and relays each `notifications/resources/updated` with the client's URI and `subscriptionId`. The
 * acknowledgement names exactly the URIs followed; the upstream stream ends with the client's. Real
 * gateway process, Temporal dev server, example upstreams over HTTP.
 */
import type { ExampleUpstream } from '../../examples/upstream/server';
import { startExampleUpstream } from '../../examples/upstream/server';
import { META } from '../../src/protocol';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway, startApiReplica } from '../helpers/gateway';
import { isAck, listen, untilSeen } from '../helpers/listen';

let bareUpstream: ExampleUpstream;
let gw: TestGateway;
beforeAll(async () => {
  // Serves only the tasks tools: no resources, announces no resource updates.
  bareUpstream = await startExampleUpstream({ conformanceFixtures: false });
  gw = await startTestGateway({
    projects: () => [
      { slug: 'bare', namespacing: false, upstreams: [{ alias: 'bare', url: bareUpstream.url }] },
    ],
  });
});
afterAll(async () => {
  await gw?.close();
  await bareUpstream?.close();
});

const isUpdate = (m: Record<string, unknown>) => m.method === 'notifications/resources/updated';
const acknowledged = async (handle: Awaited<ReturnType<typeof listen>>['handle']) =>
  ((await handle.next(isAck)).params as { notifications: Record<string, unknown> }).notifications;
const updates = (handle: Awaited<ReturnType<typeof listen>>['handle']) =>
  handle.messages.filter(isUpdate).map((m) => m.params);

async function updateResource(uri: string): Promise<void> {
  const res = await gw.client.callTool('test_update_resource', { uri });
  expect(res.body.result?.isError).toBeUndefined();
}

test('a stream subscribed to one resource gets exactly its updates, with its URI and subscriptionId', async () => {
  const text = await listen(gw.client.url, { resourceSubscriptions: ['test://static-text'] });
  const binary = await listen(gw.client.url, { resourceSubscriptions: ['test://static-binary'] });
  try {
    expect(await acknowledged(text.handle)).toEqual({ resourceSubscriptions: ['test://static-text'] });
    expect(await acknowledged(binary.handle)).toEqual({ resourceSubscriptions: ['test://static-binary'] });
    // One upstream listen per client stream, opened before the acknowledgement.
    expect(gw.upstream.listenStreams()).toBe(2);

    await updateResource('test://static-binary');
    await updateResource('test://template/7/data');
    await updateResource('test://static-text');
    await text.handle.next(isUpdate);
    await binary.handle.next(isUpdate);
    // The updates were sent in order on each upstream stream: by the time the text stream hears its
    // own, an update of another resource would have reached it too.
    expect(updates(text.handle)).toEqual([
      { uri: 'test://static-text', _meta: { [META.subscriptionId]: 'L1' } },
    ]);
    expect(updates(binary.handle)).toEqual([
      { uri: 'test://static-binary', _meta: { [META.subscriptionId]: 'L1' } },
    ]);

    await updateResource('test://static-text');
    await untilSeen(() => updates(text.handle).length === 2);
    expect(updates(binary.handle)).toHaveLength(1);
  } finally {
    text.handle.close();
    binary.handle.close();
  }
  // The upstream listens end with the client streams.
  await untilSeen(() => gw.upstream.listenStreams() === 0);
});

test('server/discover advertises resources.subscribe when an upstream announces it; a project without one neither advertises nor acknowledges it', async () => {
  const demo = await gw.client.request('server/discover', {});
  const demoCaps = demo.body.result?.capabilities as Record<string, Record<string, unknown> | undefined>;
  expect(demoCaps.resources?.subscribe).toBe(true);
  const bare = await gw.clientFor('bare').request('server/discover', {});
  const bareCaps = bare.body.result?.capabilities as Record<string, Record<string, unknown> | undefined>;
  expect(bareCaps.resources?.subscribe).toBeUndefined();
});

test('unknown URIs and URIs served only in another project are not acknowledged, and nothing of them leaks', async () => {
  const readsBefore = gw.upstream.stats.requests['resources/read'] ?? 0;
  // `bare` has no upstream serving resources; test://static-text is a resource of project `demo`.
  const bareUrl = gw.clientFor('bare').url;
  const other = await listen(bareUrl, {
    toolsListChanged: true,
    resourceSubscriptions: ['test://static-text', 'test://missing'],
  });
  const mixed = await listen(gw.client.url, {
    resourceSubscriptions: ['test://missing', 'test://static-text', 'nope:/x'],
  });
  try {
    // The same answer for a URI of another project as for one that exists nowhere: an empty subset.
    expect(await acknowledged(other.handle)).toEqual({ resourceSubscriptions: [] });
    expect(bareUpstream.listenStreams()).toBe(0);
    // Project `demo`'s upstream was never asked on behalf of `bare`'s stream: only `mixed` read there.
    expect(await acknowledged(mixed.handle)).toEqual({ resourceSubscriptions: ['test://static-text'] });
    expect(gw.upstream.listenStreams()).toBe(1);
    expect((gw.upstream.stats.requests['resources/read'] ?? 0) - readsBefore).toBe(3);

    await updateResource('test://static-text');
    await mixed.handle.next(isUpdate);
    expect(updates(mixed.handle)).toEqual([
      { uri: 'test://static-text', _meta: { [META.subscriptionId]: 'L1' } },
    ]);
    // `bare`'s stream got its acknowledgement and nothing else.
    expect(other.handle.messages.map((m) => m.method)).toEqual(['notifications/subscriptions/acknowledged']);
  } finally {
    other.handle.close();
    mixed.handle.close();
  }
  await untilSeen(() => gw.upstream.listenStreams() === 0);
});

test('a replica shutting down ends the stream with its final result and closes its upstream listens', async () => {
  const leaving = await startApiReplica(gw);
  const stream = await listen(`${String(leaving.url)}/v1/mcp/demo`, {
    resourceSubscriptions: ['test://static-text'],
  });
  try {
    expect(await acknowledged(stream.handle)).toEqual({ resourceSubscriptions: ['test://static-text'] });
    expect(gw.upstream.listenStreams()).toBe(1);
    await leaving.close();
    const final = await stream.handle.next((m) => 'result' in m);
    expect(final).toMatchObject({ id: 'L1', result: { resultType: 'complete' } });
    await untilSeen(() => gw.upstream.listenStreams() === 0);
  } finally {
    stream.handle.close();
  }
});
