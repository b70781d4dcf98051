/**
 * The discovery cache's own logic (lru-cache underneath): one fetch for concurrent askers, an answer kept
 * for the TTL the upstream states, a failure never kept, answers dropped per upstream. The client here is
 * a stand-in that counts sends: what is under test is the cache, not the wire.
 */
import type { DiscoverResult } from '../../src/protocol';
import { PROTOCOL_VERSION } from '../../src/protocol';
import type { UpstreamClient } from '../../src/upstream/client';
import { DiscoveryCache } from '../../src/upstream/discovery';
import type { UpstreamEndpoint } from '../../src/upstream/endpoint';

function answer(ttlMs: number): DiscoverResult {
  return {
    resultType: 'complete',
    supportedVersions: [PROTOCOL_VERSION],
    capabilities: { tools: {} },
    ttlMs,
    cacheScope: 'public',
  };
}

function countingClient(reply: () => Promise<unknown>): { client: UpstreamClient; sent: string[] } {
  const sent: string[] = [];
  const client = {
    send: async (endpoint: UpstreamEndpoint) => {
      sent.push(endpoint.cacheKey ?? endpoint.url);
      return reply();
    },
  } as unknown as UpstreamClient;
  return { client, sent };
}

const endpoint = (key: string): UpstreamEndpoint => ({
  alias: 'a',
  url: 'http://127.0.0.1:9/mcp',
  cacheKey: key,
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('concurrent askers share one fetch, and the answer is kept for its TTL', async () => {
  const { client, sent } = countingClient(async () => ({ kind: 'result', result: answer(60_000) }));
  const cache = new DiscoveryCache(client, () => ({}));
  const results = await Promise.all([1, 2, 3].map(() => cache.get(endpoint('u1#k'))));
  expect(results.map((r) => r.ttlMs)).toEqual([60_000, 60_000, 60_000]);
  await cache.get(endpoint('u1#k'));
  expect(sent).toEqual(['u1#k']);
});

test('an answer past its TTL, or with a TTL of 0, is fetched again before it is used', async () => {
  let ttl = 30;
  const { client, sent } = countingClient(async () => ({ kind: 'result', result: answer(ttl) }));
  const cache = new DiscoveryCache(client, () => ({}));
  await cache.get(endpoint('u1#k'));
  await sleep(60);
  await cache.get(endpoint('u1#k'));
  expect(sent).toHaveLength(2);
  ttl = 0;
  await cache.get(endpoint('u2#k'));
  await sleep(5);
  await cache.get(endpoint('u2#k'));
  expect(sent).toHaveLength(4);
});

test('a failed fetch is not kept: the next ask fetches again', async () => {
  let fail = true;
  const { client, sent } = countingClient(async () =>
    fail
      ? { kind: 'error', error: { code: -32603, message: 'down' }, httpStatus: 500 }
      : { kind: 'result', result: answer(60_000) },
  );
  const cache = new DiscoveryCache(client, () => ({}));
  await expect(cache.get(endpoint('u1#k'))).rejects.toThrow(/rejected server\/discover: down/);
  fail = false;
  await expect(cache.get(endpoint('u1#k'))).resolves.toMatchObject({ ttlMs: 60_000 });
  expect(sent).toHaveLength(2);
});

test("invalidateUpstream drops that upstream's answers under every credential, and only those", async () => {
  const { client, sent } = countingClient(async () => ({ kind: 'result', result: answer(60_000) }));
  const cache = new DiscoveryCache(client, () => ({}));
  for (const key of ['u1#alice', 'u1#bob', 'u10#alice']) await cache.get(endpoint(key));
  cache.invalidateUpstream('u1');
  for (const key of ['u1#alice', 'u1#bob', 'u10#alice']) await cache.get(endpoint(key));
  expect(sent).toEqual(['u1#alice', 'u1#bob', 'u10#alice', 'u1#alice', 'u1#bob']);
});

test('the cache is bounded: past 10,000 credentials the least recently used answer goes first', async () => {
  const { client, sent } = countingClient(async () => ({ kind: 'result', result: answer(60_000) }));
  const cache = new DiscoveryCache(client, () => ({}));
  for (let i = 0; i <= 10_000; i++) await cache.get(endpoint(`u1#user${i}`));
  expect(sent).toHaveLength(10_001);
  await cache.get(endpoint('u1#user10000'));
  expect(sent).toHaveLength(10_001);
  await cache.get(endpoint('u1#user0'));
  expect(sent).toHaveLength(10_002);
});
