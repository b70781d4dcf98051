/**
 * The upstream catalog's bound (src/gateway/catalog.ts): one list per upstream and credential scope, at
 * most 10,000 kept, least recently used out first, so scopes that no longer serve (a user who left, an
 * authorization revoked) do not keep their lists for the life of the process. The upstream client is a
 * stand-in answering one page: the cache's bookkeeping is under test (test/integration/mcp-apps.test.ts
 * and every routing test read real upstreams through it).
 */
import { UpstreamCatalog } from '../../src/gateway/catalog';
import type { UpstreamClient, UpstreamEndpoint } from '../../src/upstream/client';

test('lists of 10,000 scopes are kept; the least recently used goes to make room for more', async () => {
  const asked: string[] = [];
  const client = {
    send: (endpoint: UpstreamEndpoint) => {
      asked.push(endpoint.cacheKey ?? '');
      return Promise.resolve({
        kind: 'result',
        result: { tools: [{ name: 'greet', inputSchema: { type: 'object' } }], ttlMs: 3_600_000 },
      });
    },
  } as unknown as UpstreamClient;
  const catalog = new UpstreamCatalog(client, { name: 'taskrouter', version: 'test' });
  const scope = (i: number) =>
    ({ alias: 'up', url: 'http://127.0.0.1:1/mcp', cacheKey: `ups_1#auth_${i}` }) as UpstreamEndpoint;

  for (let i = 0; i < 10_000; i++) await catalog.toolsOf(scope(i));
  await catalog.toolsOf(scope(0)); // used again: now the most recent
  expect(asked).toHaveLength(10_000);
  await catalog.toolsOf(scope(10_000)); // one more scope: scope 1, the least recently used, goes
  asked.length = 0;
  await catalog.toolsOf(scope(0));
  await catalog.toolsOf(scope(10_000));
  expect(asked).toEqual([]);
  await catalog.toolsOf(scope(1));
  expect(asked).toEqual(['ups_1#auth_1']);
  expect(catalog.knownToolNames('ups_1')).toEqual(['greet']);
});
