/**
 * Tenancy and access on the MCP endpoint and on every task follow-up, through the real gateway with a
 * real control plane (bootstrap file + admin API), on SQLite and PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway, tokenUsers } from '../helpers/gateway';
import type { McpTestClient } from '../helpers/mcp-client';
import { adminCall } from '../helpers/admin-api';

const ADMIN = `admin-${randomUUID()}`;
const T = {
  alice: 'trp_alice-team-member-0000000000000000',
  bob: 'trp_bob-direct-member-000000000000000000',
  carol: 'trp_carol-other-team-0000000000000000000',
  dave: 'trp_dave-per-user-auth-00000000000000000',
  key1: 'trk_project-key-one-00000000000000000000',
  key2: 'trk_project-key-two-00000000000000000000',
};

let gw: TestGateway;
let secure: McpTestClient;

beforeAll(async () => {
  gw = await startTestGateway({
    config: { admin: { token: ADMIN } },
    projects: () => [],
    bootstrap: (url) => {
      return {
        users: tokenUsers({ alice: T.alice, bob: T.bob, carol: T.carol, dave: T.dave }),
        teams: [
          { slug: 'core', members: ['alice', 'dave'] },
          { slug: 'other', members: ['carol'] },
        ],
        projects: [
          {
            slug: 'secure',
            team: 'core',
            namespacing: false,
            members: ['bob'],
            apiKeys: [
              { name: 'one', key: T.key1 },
              { name: 'two', key: T.key2 },
            ],
            upstreams: [{ alias: 'example', url }],
          },
          {
            slug: 'peruser',
            team: 'core',
            namespacing: false,
            upstreams: [{ alias: 'example', url, auth: { mode: 'per_user' } }],
          },
          { slug: 'elsewhere', team: 'other', namespacing: false, upstreams: [{ alias: 'example', url }] },
          {
            slug: 'twins',
            team: 'core',
            upstreams: [
              { alias: 'a', url },
              { alias: 'b', url },
            ],
          },
        ],
      };
    },
  });
  secure = gw.clientFor('secure');
});
afterAll(async () => {
  await gw?.close();
});

async function admin(method: string, route: string, body?: unknown, token = ADMIN) {
  const { status, text } = await adminCall(gw.client.url, token, method, route, body);
  return { status, body: text || undefined };
}

async function startTask(client: McpTestClient, seconds = 30): Promise<string> {
  const reply = await client.callTool('slow_compute', { seconds, label: 'access' });
  expect(reply.body.result?.resultType).toBe('task');
  return String(reply.body.result?.taskId);
}

describe('who may call a project', () => {
  test('team members and direct members may; other teams, no token and bad tokens may not', async () => {
    expect((await secure.withToken(T.alice).request('tools/list', {}, { tasks: false })).status).toBe(200);
    expect((await secure.withToken(T.bob).request('tools/list', {}, { tasks: false })).status).toBe(200);
    expect((await secure.withToken(T.key1).request('tools/list', {}, { tasks: false })).status).toBe(200);
    const carol = await secure.withToken(T.carol).request('tools/list', {}, { tasks: false });
    expect(carol.status).toBe(404);
    expect((await secure.request('tools/list', {}, { tasks: false })).status).toBe(401);
    expect(
      (await secure.withToken('trp_not-a-real-token-000000000000000').request('tools/list')).status,
    ).toBe(401);
  });

  test('a team member can change the project; a direct member and another team cannot', async () => {
    expect(
      (await admin('PATCH', '/projects/secure', { limits: { maxResultBytes: 900000 } }, T.alice)).status,
    ).toBe(200);
    expect(
      (await admin('PATCH', '/projects/secure', { limits: { maxResultBytes: 800000 } }, T.bob)).status,
    ).toBe(403);
    expect(
      (await admin('PATCH', '/projects/secure', { limits: { maxResultBytes: 700000 } }, T.carol)).status,
    ).toBe(403);
  });
});

test('turning namespacing off over colliding upstreams is refused with a clear configuration error', async () => {
  const reply = await admin('PATCH', '/projects/twins', { namespacing: false }, T.alice);
  expect(reply.status).toBe(400);
  expect(reply.body).toMatch(/share names.*tool \\"greet\\" \(a, b\)/);
  const view = await admin('GET', '/projects/twins');
  expect(view.body).toContain('"namespacing":true');
});

describe('task follow-ups are bound to project, caller and authorization', () => {
  test('another caller of the same project gets -32602, and the upstream receives nothing', async () => {
    const taskId = await startTask(secure.withToken(T.alice));
    const cancels = gw.upstream.stats.tasksCancel;
    const updates = gw.upstream.stats.tasksUpdate;
    for (const token of [T.bob, T.key1]) {
      const client = secure.withToken(token);
      expect((await client.getTask(taskId)).body.error?.code).toBe(-32602);
      expect((await client.request('tasks/cancel', { taskId })).body.error?.code).toBe(-32602);
      const update = await client.request('tasks/update', { taskId, inputResponses: {} });
      expect(update.body.error?.code).toBe(-32602);
    }
    expect(gw.upstream.stats.tasksCancel).toBe(cancels);
    expect(gw.upstream.stats.tasksUpdate).toBe(updates);
    // The owner still can.
    expect((await secure.withToken(T.alice).getTask(taskId)).body.result?.status).toBe('working');
    await secure.withToken(T.alice).request('tasks/cancel', { taskId });
  });

  test('a caller of another project gets -32602 for the same task id', async () => {
    const taskId = await startTask(secure.withToken(T.alice));
    const elsewhere = gw.clientFor('elsewhere').withToken(T.carol);
    expect((await elsewhere.getTask(taskId)).body.error?.code).toBe(-32602);
    await secure.withToken(T.alice).request('tasks/cancel', { taskId });
  });

  test('an API key caller’s tasks are bound to that key; a revoked key gets 401', async () => {
    const taskId = await startTask(secure.withToken(T.key1));
    expect((await secure.withToken(T.key2).getTask(taskId)).body.error?.code).toBe(-32602);
    expect((await secure.withToken(T.key1).getTask(taskId)).body.result?.status).toBe('working');
    const keys = JSON.parse((await admin('GET', '/projects/secure/keys')).body as string) as {
      keys: Array<{ id: string; name: string }>;
    };
    const one = keys.keys.find((k) => k.name === 'one');
    expect((await admin('DELETE', `/projects/secure/keys/${one?.id}`)).status).toBe(200);
    const cancels = gw.upstream.stats.tasksCancel;
    expect((await secure.withToken(T.key1).getTask(taskId)).status).toBe(401);
    expect((await secure.withToken(T.key1).request('tasks/cancel', { taskId })).status).toBe(401);
    expect(gw.upstream.stats.tasksCancel).toBe(cancels);
  });

  test('after a direct member is removed, their task follow-ups are refused', async () => {
    const bob = secure.withToken(T.bob);
    const taskId = await startTask(bob);
    expect((await admin('DELETE', '/projects/secure/members/bob')).status).toBe(204);
    const cancels = gw.upstream.stats.tasksCancel;
    expect((await bob.getTask(taskId)).status).toBe(404);
    expect((await bob.request('tasks/cancel', { taskId })).status).toBe(404);
    expect(gw.upstream.stats.tasksCancel).toBe(cancels);
  });

  test("per-user upstream authorization: used for the user's calls; after revocation, follow-ups fail", async () => {
    const dave = gw.clientFor('peruser').withToken(T.dave);
    const missing = await dave.callTool('slow_compute', { seconds: 1 });
    expect(missing.body.error).toMatchObject({ code: -31009, message: expect.stringContaining('"example"') });

    const grant = await admin(
      'PUT',
      '/projects/peruser/upstreams/example/authorization',
      { credential: 'dave-upstream-secret' },
      T.dave,
    );
    expect(grant.status).toBe(200);
    const taskId = await startTask(dave);
    expect(gw.upstream.stats.lastHeaders?.authorization).toBe('Bearer dave-upstream-secret');

    expect(
      (await admin('DELETE', '/projects/peruser/upstreams/example/authorization', undefined, T.dave)).status,
    ).toBe(200);
    const cancels = gw.upstream.stats.tasksCancel;
    const get = await dave.getTask(taskId);
    expect(get.body.error).toMatchObject({ code: -31009 });
    const cancel = await dave.request('tasks/cancel', { taskId });
    expect(cancel.body.error).toMatchObject({ code: -31009 });
    expect(gw.upstream.stats.tasksCancel).toBe(cancels);
  });
});

test('the result cache never serves one caller’s result to another', async () => {
  const key = randomUUID();
  const alice = secure.withToken(T.alice);
  const first = await alice.callTool('lookup', { key }, { tasks: false });
  const again = await alice.callTool('lookup', { key }, { tasks: false });
  expect(again.body.result?._meta).toMatchObject({ 'com.taskrouter/cache': 'hit' });
  const other = await secure.withToken(T.key2).callTool('lookup', { key }, { tasks: false });
  expect(other.body.result?._meta).not.toHaveProperty(['com.taskrouter/cache']);
  expect(other.body.result?.structuredContent).not.toEqual(first.body.result?.structuredContent);
});

test('denied task access is audited', async () => {
  const audit = JSON.parse((await admin('GET', '/projects/secure/audit')).body as string) as {
    events: Array<{ action: string }>;
  };
  expect(audit.events.map((e) => e.action)).toContain('task.access_denied');
});
