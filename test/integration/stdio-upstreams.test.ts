/**
 * A local MCP server run by the gateway over stdio (`@modelcontextprotocol/server-everything` in stdio
 * mode), named by an entry of the operator's catalog (`stdio.catalog`): its tools listed and called
 * through the real gateway, catalog references refused through the admin API naming the field, and no
 * process left behind when the gateway stops. Real processes, real Temporal, both databases.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway, tokenUsers } from '../helpers/gateway';
import type { McpTestClient } from '../helpers/mcp-client';
import { resultText } from '../helpers/mcp-client';
import { adminCall } from '../helpers/admin-api';

const START_TIMEOUT_MS = 180_000;
const ADMIN_TOKEN = 'stdio-upstreams-admin-token';
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
/** Marks this file's processes in their environment, so they can be found in /proc. */
const MARK = `mark-${randomBytes(6).toString('hex')}`;
const T = {
  alice: 'trp_alice-stdio-user-00000000000000000000',
  bob: 'trp_bob-stdio-user-0000000000000000000000',
};

let gw: TestGateway;
let client: McpTestClient;

beforeAll(async () => {
  gw = await startTestGateway({
    config: {
      admin: { token: ADMIN_TOKEN },
      stdio: {
        catalog: {
          everything: {
            command: process.execPath,
            args: [EVERYTHING, 'stdio'],
            env: { TASKROUTER_TEST_MARK: MARK },
            settable: { root: { pattern: '[a-z0-9-]+', under: '/tmp', required: false } },
            credentialEnv: 'UPSTREAM_TOKEN',
          },
        },
      },
    },
    projects: () => [
      { slug: 'local', namespacing: false, upstreams: [{ alias: 'everything', url: 'stdio:everything' }] },
      { slug: 'other', upstreams: [{ alias: 'everything', url: 'stdio:everything' }] },
    ],
    bootstrap: () => ({
      users: tokenUsers({ alice: T.alice, bob: T.bob }),
      teams: [{ slug: 'core', members: ['alice', 'bob'] }],
      projects: [
        {
          slug: 'peruser',
          team: 'core',
          namespacing: false,
          upstreams: [{ alias: 'everything', url: 'stdio:everything', auth: { mode: 'per_user' } }],
        },
      ],
    }),
  });
  client = gw.clientFor('local');
}, START_TIMEOUT_MS);
afterAll(async () => {
  await gw?.close();
});

/** Pids of this file's server processes now running. */
function marked(): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, 'utf8').includes(`TASKROUTER_TEST_MARK=${MARK}`))
        pids.push(Number(name));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

async function admin(method: string, path: string, body?: unknown) {
  const reply = await adminCall(client.url, ADMIN_TOKEN, method, path, body);
  return { status: reply.status, body: (reply.body ?? {}) as Record<string, unknown> };
}

test('its tools are discovered, listed and called through the gateway, reusing its process', async () => {
  const listed = await client.request('tools/list');
  // The callers' scope and the probe's (upstream-probes.ts) each have one.
  const running = marked();
  expect(running.length).toBeGreaterThan(0);
  const names = ((listed.body.result?.tools ?? []) as Array<{ name: string }>).map((t) => t.name);
  expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum', 'get-env']));
  const echo = await client.callTool('echo', { message: 'over stdio' }, { tasks: false });
  expect(resultText(echo.body.result)).toBe('Echo: over stdio');
  const sum = await client.callTool('get-sum', { a: 2, b: 3 }, { tasks: false });
  expect(resultText(sum.body.result)).toContain('5');
  expect(marked()).toEqual(running);
});

test("the server's own 2025-11-25 task tool runs as a gateway task over stdio and completes", async () => {
  const created = await client.callTool('simulate-research-query', { topic: 'stdio' });
  expect(created.body.result).toMatchObject({ resultType: 'task', status: 'working' });
  const taskId = String(created.body.result?.taskId);
  const done = await client.waitForTask(taskId, undefined, 30_000);
  expect(done).toMatchObject({ status: 'completed', taskId });
  expect(resultText(done.result as Record<string, unknown>)).toMatch(/^# Research Report: stdio/);
});

test('a server task whose process died fails clearly: a fresh process does not know it', async () => {
  const created = await client.callTool('simulate-research-query', { topic: 'killed' });
  expect(created.body.result).toMatchObject({ resultType: 'task', status: 'working' });
  const taskId = String(created.body.result?.taskId);
  for (const pid of marked()) process.kill(pid, 'SIGKILL');
  const done = await client.waitForTask(taskId, undefined, 60_000);
  expect(done.status).toBe('failed');
  expect(JSON.stringify(done)).toMatch(/no longer knows this task|stayed unreachable/);
  // The gateway goes on with a fresh process.
  const echo = await client.callTool('echo', { message: 'after the crash' }, { tasks: false });
  expect(resultText(echo.body.result)).toBe('Echo: after the crash');
});

test('a per_user upstream runs one process per user, each with only its own credential', async () => {
  for (const user of ['alice', 'bob'] as const) {
    const granted = await admin('PUT', '/projects/peruser/upstreams/everything/authorization', {
      user,
      credential: `secret-of-${user}`,
    });
    expect(granted.status).toBe(200);
  }
  const before = new Set(marked());
  const peruser = gw.clientFor('peruser');
  const envs: Record<string, string> = {};
  for (const user of ['alice', 'bob'] as const) {
    const reply = await peruser.withToken(T[user]).callTool('get-env', {}, { tasks: false });
    envs[user] = resultText(reply.body.result);
  }
  expect(envs.alice).toContain('secret-of-alice');
  expect(envs.alice).not.toContain('secret-of-bob');
  expect(envs.bob).toContain('secret-of-bob');
  expect(envs.bob).not.toContain('secret-of-alice');
  const started = marked().filter((pid) => !before.has(pid));
  expect(started).toHaveLength(2);
  const tokens = started.map(
    (pid) => /UPSTREAM_TOKEN=([^\0]*)/.exec(readFileSync(`/proc/${pid}/environ`, 'utf8'))?.[1],
  );
  expect(new Set(tokens)).toEqual(new Set(['secret-of-alice', 'secret-of-bob']));
});

test('the admin API refuses unknown entries and values outside their pattern, naming the field', async () => {
  // Left by an earlier run on a kept database, if any.
  await admin('DELETE', '/projects/local/upstreams/mine');
  await admin('DELETE', '/projects/other/upstreams/mine');
  const unknown = await admin('POST', '/projects/local/upstreams', { alias: 'x', url: 'stdio:nothing' });
  expect(unknown.status).toBe(400);
  expect(JSON.stringify(unknown.body)).toMatch(/url: stdio catalog entry \\"nothing\\" is not in/);
  const outside = await admin('POST', '/projects/local/upstreams', {
    alias: 'y',
    url: 'stdio:everything?root=..%2Fetc',
  });
  expect(outside.status).toBe(400);
  expect(JSON.stringify(outside.body)).toMatch(/url\.root/);
  const undeclared = await admin('POST', '/projects/local/upstreams', {
    alias: 'z',
    url: 'stdio:everything?command=sh',
  });
  expect(undeclared.status).toBe(400);
  expect(JSON.stringify(undeclared.body)).toMatch(/url\.command: .*no settable value/);
  const ok = await admin('POST', '/projects/local/upstreams', {
    alias: 'mine',
    url: 'stdio:everything?root=mine',
  });
  expect(ok.status).toBe(201);
});

test('no process is left once the gateway stops', async () => {
  expect(marked().length).toBeGreaterThan(0);
  await gw.stop();
  expect(marked()).toEqual([]);
});
