/**
 * Issue 22, findings 2 and 7, against a real gateway and real upstreams (HTTP servers of the test's own
 * that record the headers of every request they get):
 *
 * - a project manager re-points upstreams: the project credential and every user's authorization stay
 *   behind (nothing old reaches the new address, the probe included), a credential given in the same
 *   change goes to the new address only, a running task fails instead of polling the new address, and
 *   the trail says what was dropped;
 * - where managers may point upstreams: this gateway allows them 127.0.0.1 only (so the test's servers
 *   are usable), and refuses other loopback forms, link-local, private and the gateway's own port, before
 *   any connection; a manager's upstream refused at connection time (the policy tightened later) opens no
 *   connection; a manager hears the same message for a closed port and for something that is not MCP.
 *
 * Every refused address here is refused before a connection is made: no traffic leaves loopback.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { PROBE_FAILED } from '../../src/protocol';
import type { Runtime } from '../../src/main/runtime';
import { startRuntime } from '../../src/main/runtime';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway, tokenUsers } from '../helpers/gateway';
import type { HostileUpstream } from '../helpers/hostile-upstream';
import { startHostileUpstream } from '../helpers/hostile-upstream';
import { McpTestClient, TASKS_AND_FORM_CAPS } from '../helpers/mcp-client';
import { dashboardSession, freePort } from '../helpers/oidc';

const ADMIN = 'admin-token-upstream-addresses-0000000';
const TOKENS = {
  alice: 'trp_alice-upstream-addresses-000000000000', // team member: manages project `shop`
  bob: 'trp_bob-upstream-addresses-00000000000000000', // project member: calls it
};
const SECRET = 'MARKER-project-secret-2f9c';
const BOBS = 'MARKER-bob-own-token-71d0';
const FRESH_SECRET = 'MARKER-new-secret-c4a8';

/** An MCP server that records every request's headers and answers `echo` with where it is. */
interface Recorder extends HostileUpstream {
  heard: Array<Record<string, string | string[] | undefined>>;
  connections: number;
}

async function recorder(name: string): Promise<Recorder> {
  const up = await startHostileUpstream({
    tools: [{ name: 'echo', inputSchema: { type: 'object' } }],
    onRequest: (_req, res, message) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: message.id,
          result: { resultType: 'complete', content: [{ type: 'text', text: `at ${name}` }] },
        }),
      );
    },
  });
  const r = Object.assign(up, { heard: [] as Recorder['heard'], connections: 0 });
  up.server.on('request', (req) => r.heard.push({ ...req.headers }));
  up.server.on('connection', () => r.connections++);
  return r;
}

let gw: TestGateway;
let old: Recorder;
let fresh: Recorder;
let base: string;

beforeAll(async () => {
  [old, fresh] = await Promise.all([recorder('old'), recorder('fresh')]);
  const port = await freePort();
  gw = await startTestGateway({
    config: {
      // A public origin: users connect upstreams with OAuth under it.
      http: { host: '127.0.0.1', port, publicBaseUrl: `http://127.0.0.1:${port}` },
      admin: { token: ADMIN },
      // Managers may use this one loopback address (where the test's servers are), nothing else private.
      upstreams: { networks: { allow: ['127.0.0.1'] } },
    },
    bootstrap: () => ({
      users: tokenUsers({ alice: TOKENS.alice, bob: TOKENS.bob }),
      teams: [{ slug: 'core', members: ['alice'] }],
      projects: [{ slug: 'shop', team: 'core', members: ['bob'] }],
    }),
  });
  base = new URL(gw.client.url).origin;
}, 120_000);
afterAll(async () => {
  await gw?.close();
  await old?.close();
  await fresh?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON answers, inspected field by field
type Json = any;

async function adminApi(
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${base}/v1/admin${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}
const alice = (method: string, path: string, body?: unknown) => adminApi(TOKENS.alice, method, path, body);
const shop = () => gw.clientFor('shop').withToken(TOKENS.bob);
const echo = (alias: string) => shop().callTool(`${alias}.echo`, {}, { tasks: false });
/** Every header value a server heard, as one string. */
const heardText = (r: Recorder) => JSON.stringify(r.heard);

describe('re-pointing an upstream (finding 2)', () => {
  test('the project credential and users’ authorizations stay behind; nothing old reaches the new address', async () => {
    expect(
      (
        await alice('POST', '/projects/shop/upstreams', {
          alias: 'vault',
          url: old.url,
          auth: { mode: 'project', credential: SECRET },
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await alice('POST', '/projects/shop/upstreams', {
          alias: 'desk',
          url: old.url,
          auth: { mode: 'per_user' },
        })
      ).status,
    ).toBe(201);
    expect(
      (await adminApi(TOKENS.bob, 'PUT', '/projects/shop/upstreams/desk/authorization', { credential: BOBS }))
        .status,
    ).toBe(200);
    expect(JSON.stringify((await echo('vault')).body.result)).toContain('at old');
    expect(JSON.stringify((await echo('desk')).body.result)).toContain('at old');
    expect(heardText(old)).toContain(`Bearer ${SECRET}`);
    expect(heardText(old)).toContain(`Bearer ${BOBS}`);

    const vault = await alice('PATCH', '/projects/shop/upstreams/vault', { url: fresh.url });
    expect(vault.status).toBe(200);
    expect(vault.body).toMatchObject({ url: fresh.url, credentialSet: false, addressApproved: false });
    expect((await alice('PATCH', '/projects/shop/upstreams/desk', { url: fresh.url })).status).toBe(200);

    expect((await echo('vault')).body.error?.message).toContain(
      'needs a project credential; none is configured',
    );
    expect((await echo('desk')).body.error?.message).toContain('needs your authorization; yours was revoked');
    // The probes after the changes reached the new address, without any credential.
    expect(fresh.heard.length).toBeGreaterThan(0);
    expect(fresh.heard.every((h) => h['authorization'] === undefined)).toBe(true);
    expect(heardText(fresh)).not.toContain(SECRET);
    expect(heardText(fresh)).not.toContain(BOBS);

    // A credential given with the move is the new address's, and only there.
    const heardOld = old.heard.length;
    await alice('PATCH', '/projects/shop/upstreams/vault', {
      url: fresh.url,
      auth: { mode: 'project', credential: FRESH_SECRET },
    });
    expect(JSON.stringify((await echo('vault')).body.result)).toContain('at fresh');
    expect(heardText(fresh)).toContain(`Bearer ${FRESH_SECRET}`);
    expect(heardText(fresh)).not.toContain(SECRET);
    expect(old.heard.length).toBe(heardOld);

    const audit = await alice('GET', '/projects/shop/audit');
    const drops = (audit.body.events ?? audit.body).filter(
      (e: { action: string }) => e.action === 'upstream.credentials_dropped',
    );
    expect(drops.map((e: { detail: unknown }) => e.detail)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ alias: 'vault', because: 'address_changed', projectCredential: true }),
        expect.objectContaining({ alias: 'desk', because: 'address_changed', authorizations: 1 }),
      ]),
    );
    expect(JSON.stringify(audit.body)).not.toContain('MARKER');
  });

  test('a task created on the old address fails instead of reaching the new one', async () => {
    expect(
      (await alice('POST', '/projects/shop/upstreams', { alias: 'slow', url: gw.upstream.url })).status,
    ).toBe(201);
    const created = await shop().callTool(
      'slow.slow_compute',
      { seconds: 60, label: 'pinned' },
      { capabilities: TASKS_AND_FORM_CAPS },
    );
    expect(created.body.error).toBeUndefined();
    const taskId = String(created.body.result?.taskId);
    await shop().waitForTask(taskId, (s) => s === 'working');

    expect((await alice('PATCH', '/projects/shop/upstreams/slow', { url: fresh.url })).status).toBe(200);
    const done = await shop().waitForTask(taskId, undefined, 60_000);
    expect(done.status).toBe('failed');
    expect(JSON.stringify(done)).toContain('re-pointed to another address after this task started');
    expect(fresh.seen['tasks/get']).toBeUndefined();
    expect(fresh.seen['tasks/cancel']).toBeUndefined();
  });
});

describe('where managers may point upstreams (finding 7)', () => {
  test('other loopback forms, link-local, private and the gateway’s own port are refused before any connection', async () => {
    const gatewayPort = new URL(base).port;
    for (const url of [
      `http://127.0.0.2:${new URL(old.url).port}/mcp`,
      `http://[::1]:${new URL(old.url).port}/mcp`,
      `http://[::ffff:127.0.0.2]/mcp`,
      `http://0.0.0.0:${gatewayPort}/mcp`,
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/mcp',
      'http://[fd00::1]/mcp',
      `http://127.0.0.1:${gatewayPort}/v1/mcp/demo`,
    ]) {
      const refused = await alice('POST', '/projects/shop/upstreams', { alias: 'probe', url });
      expect({ url, status: refused.status }).toEqual({ url, status: 403 });
      expect(refused.body.error.message).toContain('upstreams.networks.allow');
    }
    // Re-pointing an upstream there is refused the same way, and leaves it as it was.
    const moved = await alice('PATCH', '/projects/shop/upstreams/vault', { url: 'http://169.254.169.254/' });
    expect(moved.status).toBe(403);
    expect(
      (await alice('GET', '/projects/shop/upstreams')).body.upstreams.find(
        (u: { alias: string }) => u.alias === 'vault',
      ).url,
    ).toBe(fresh.url);
    const audit = await alice('GET', '/projects/shop/audit');
    expect(JSON.stringify(audit.body)).toContain('upstream.address_refused');

    // The instance administrator may (its address is approved; connections to it are not checked).
    const ops = await adminApi(ADMIN, 'POST', '/projects/shop/upstreams', {
      alias: 'ops',
      url: `http://localhost:${new URL(gw.upstream.url).port}/mcp`,
    });
    expect(ops.status).toBe(201);
    expect(ops.body).toMatchObject({ addressApproved: true, probe: { era: 'modern' } });
  });

  test('a manager hears the same message for a closed port and for a server that is not MCP', async () => {
    const page = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hi</html>'),
    );
    await new Promise<void>((r) => page.listen(0, '127.0.0.1', r));
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    try {
      const html = await alice('POST', '/projects/shop/upstreams', {
        alias: 'page',
        url: `http://127.0.0.1:${(page.address() as AddressInfo).port}/mcp`,
      });
      const shut = await alice('POST', '/projects/shop/upstreams', {
        alias: 'shut',
        url: `http://127.0.0.1:${closedPort}/mcp`,
      });
      expect(html.body.probe).toEqual({ ...shut.body.probe, probedAt: html.body.probe.probedAt });
      expect(html.body.probe).toMatchObject({ era: null, error: PROBE_FAILED });
      // Calls say no more than the view.
      const [a, b] = [await echo('page'), await echo('shut')];
      expect(a.body.error?.message.replace('"page"', '"x"')).toBe(
        b.body.error?.message.replace('"shut"', '"x"'),
      );
      // The operator sees what failed.
      const views = (await adminApi(ADMIN, 'GET', '/projects/shop/upstreams')).body.upstreams as Array<{
        alias: string;
        probe: { error: string };
      }>;
      expect(views.find((u) => u.alias === 'page')?.probe.error).toContain('text/html');
      expect(views.find((u) => u.alias === 'shut')?.probe.error).toContain('unreachable');
    } finally {
      await new Promise<void>((r) => page.close(() => r()));
    }
  });

  test('a manager’s upstream the policy refuses at connection time opens no connection', async () => {
    // The same store under a stricter policy (public addresses only): 127.0.0.1 is refused when connecting.
    let strict: Runtime | undefined;
    try {
      strict = await startRuntime({
        config: {
          ...gw.config,
          http: { ...gw.config.http, port: 0 },
          upstreams: { ...gw.config.upstreams, networks: { allow: ['public'] } },
        },
        logger: pino({ level: 'silent' }),
        api: true,
        worker: false,
      });
      const before = fresh.connections;
      const client = new McpTestClient(`${strict.url}/v1/mcp/shop`).withToken(TOKENS.bob);
      const reply = await client.callTool('vault.echo', {}, { tasks: false });
      expect(reply.body.error).toMatchObject({ code: -31017, data: { upstream: 'vault' } });
      expect(fresh.connections).toBe(before);
      // The operator's upstream on loopback still works there.
      expect(
        (await client.callTool('ops.greet', { name: 'x' }, { tasks: false })).body.error,
      ).toBeUndefined();
    } finally {
      await strict?.close();
    }
  });

  test('connecting a manager’s upstream with OAuth calls only allowed addresses: an authorization server it names elsewhere is refused', async () => {
    // The upstream (allowed) names its authorization server at 127.0.0.2, which managers may not use.
    const resource = createServer((req, res) => {
      const origin = `http://127.0.0.1:${(resource.address() as AddressInfo).port}`;
      req.resume();
      if (req.method === 'POST') {
        res.writeHead(401, {
          'www-authenticate': `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
        });
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ resource: `${origin}/mcp`, authorization_servers: ['http://127.0.0.2:8443/'] }),
      );
    });
    await new Promise<void>((r) => resource.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(resource.address() as AddressInfo).port}/mcp`;
      const added = await alice('POST', '/projects/shop/upstreams', {
        alias: 'sso',
        url,
        auth: { mode: 'per_user', oauth: {} },
      });
      expect(added.status).toBe(201);
      const session = await dashboardSession(base, TOKENS.bob);
      const res = await fetch(`${base}/v1/connect/shop/sso`, {
        headers: { cookie: session },
        redirect: 'manual',
      });
      expect(res.status).toBe(502);
      // Refused before connecting (a connection to 127.0.0.2:8443 would have said "could not be reached").
      expect(await res.text()).toContain('127.0.0.2:8443 is in a network the gateway may not call');
    } finally {
      await new Promise<void>((r) => resource.close(() => r()));
    }
  });
});
