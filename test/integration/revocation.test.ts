/**
 * The serving cache (src/store/control-plane/serving-cache.ts) never lets a change wait on a lifetime:
 * a token revoked, an API key revoked or a member removed through one API replica stops working on
 * another replica of the same store within the cache's check interval (250 ms, so well within a second).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Runtime } from '../../src/main/runtime';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway, startApiReplica, tokenUsers } from '../helpers/gateway';
import { McpTestClient } from '../helpers/mcp-client';
import { adminCall } from '../helpers/admin-api';

const ADMIN = `admin-${randomUUID()}`;
const ALICE = 'trp_alice-revocation-test-000000000000000';
const BOB = 'trp_bob-revocation-test-0000000000000000000';
const KEY = 'trk_revocation-test-key-00000000000000000';

let gw: TestGateway;
let other: Runtime;

beforeAll(async () => {
  gw = await startTestGateway({
    config: { admin: { token: ADMIN } },
    projects: () => [],
    bootstrap: (url) => {
      return {
        users: tokenUsers({ alice: ALICE, bob: BOB }),
        teams: [{ slug: 'core', members: ['alice'] }],
        projects: [
          {
            slug: 'guarded',
            team: 'core',
            namespacing: false,
            members: ['bob'],
            apiKeys: [{ name: 'k', key: KEY }],
            upstreams: [{ alias: 'example', url }],
          },
        ],
      };
    },
  });
  other = await startApiReplica(gw);
});
afterAll(async () => {
  await other?.close();
  await gw?.close();
});

/** The project's endpoint on the other replica, calling with `token`. */
function onOther(token: string): McpTestClient {
  return new McpTestClient(`${String(other.url)}/v1/mcp/guarded`).withToken(token);
}

async function admin(method: string, route: string): Promise<number> {
  return (await adminCall(gw.client.url, ADMIN, method, route)).status;
}

const list = (client: McpTestClient) => client.request('tools/list', {}, { tasks: false });

test('a revoked user token stops working on the other replica within a second', async () => {
  // Warm the other replica's cache first: the revocation must beat a cached answer, not a cold one.
  expect((await list(onOther(ALICE))).status).toBe(200);
  expect((await list(onOther(ALICE))).status).toBe(200);
  const base = gw.client.url.replace(/\/v1\/mcp\/.*$/, '');
  const tokens = (await (
    await fetch(`${base}/v1/admin/users/alice/tokens`, { headers: { authorization: `Bearer ${ADMIN}` } })
  ).json()) as { tokens: { id: string }[] };
  const tokenId = tokens.tokens[0]?.id as string;
  expect(await admin('DELETE', `/users/alice/tokens/${tokenId}`)).toBe(200);
  await sleep(1000);
  expect((await list(onOther(ALICE))).status).toBe(401);
});

test('a removed member and a revoked API key stop working on the other replica within a second', async () => {
  expect((await list(onOther(BOB))).status).toBe(200);
  expect((await list(onOther(KEY))).status).toBe(200);
  expect(await admin('DELETE', '/projects/guarded/members/bob')).toBe(204);
  const base = gw.client.url.replace(/\/v1\/mcp\/.*$/, '');
  const keys = (await (
    await fetch(`${base}/v1/admin/projects/guarded/keys`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    })
  ).json()) as { keys: { id: string }[] };
  expect(await admin('DELETE', `/projects/guarded/keys/${keys.keys[0]?.id as string}`)).toBe(200);
  await sleep(1000);
  expect((await list(onOther(BOB))).status).toBe(404);
  expect((await list(onOther(KEY))).status).toBe(401);
});
