/**
 * Issue 24, item 1 (settings) and the listing part of item 2, against a real gateway: an upstream's
 * hosting policy set by the configuration file, the bootstrap file, the admin API (`POST`, `PATCH`,
 * `hosting: null`) and the CLI (a child process on the gateway's own database); bad input refused with
 * an `invalid` error naming the field, like a bad `auth`; every change audited; the rules that match
 * none of the upstream's tools shown as `hosting.unmatched`; and a 2025-11-25 client that takes tasks
 * seeing hosted tools (only those) as `execution.taskSupport: "optional"`, a 2026-07-28 client's
 * listing unchanged. The example upstream does not run tasks itself here, so every mark is the policy's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CliOutcome } from '../helpers/admin-cli';
import { adminCliEnv, runAdminCli } from '../helpers/admin-cli';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { adminCall } from '../helpers/admin-api';

// The CLI cases start a Node process each (tsx, ~1-3 s on a busy box).
jest.setTimeout(180_000);

const ADMIN = 'admin-token-upstream-hosting-00000000';
const TASK_CAPABILITIES = { tasks: { list: {}, cancel: {}, requests: { elicitation: { create: {} } } } };

let gw: TestGateway;
let origin: string;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-hosting-'));
  gw = await startTestGateway({
    upstream: { advertiseTasks: false },
    config: { admin: { token: ADMIN } },
    // The configuration file's projects: one with a policy of defaults only.
    projects: (url) => [
      {
        slug: 'cfg',
        namespacing: false,
        upstreams: [{ alias: 'example', url, hosting: { tools: ['greet'] } }],
      },
    ],
    bootstrap: (url) => ({
      teams: [{ slug: 'core' }],
      projects: [
        {
          slug: 'boot',
          team: 'core',
          authMode: 'anonymous',
          upstreams: [
            {
              alias: 'example',
              url,
              hosting: { tools: ['greet', 'slow_*'], promoteAfterMs: 500, repeatable: ['!greet'] },
            },
          ],
        },
      ],
    }),
  });
  origin = new URL(gw.client.url).origin;
});

afterAll(async () => {
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Reply {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

async function admin(method: string, route: string, body?: unknown): Promise<Reply> {
  const { status, body: json } = await adminCall(origin, ADMIN, method, route, body);
  return { status, body: json };
}

const patch = (body: unknown) => admin('PATCH', '/projects/demo/upstreams/example', body);

async function upstreamOf(project: string, alias = 'example') {
  const { body } = await admin('GET', `/projects/${project}/upstreams`);
  return (body.upstreams as Array<{ alias: string; hosting?: Record<string, unknown> }>).find(
    (u) => u.alias === alias,
  );
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- audit details, inspected field by field
async function events(project: string): Promise<Array<{ action: string; detail: any }>> {
  return (await admin('GET', `/projects/${project}/audit?limit=100`)).body.events;
}

/** tools/list for a 2025-11-25 client (SDK 1.x), with or without task support: name -> taskSupport. */
async function legacyListing(project: string, tasks: boolean): Promise<Map<string, string | undefined>> {
  const client = new Client(
    { name: 'hosting-test', version: '1.0.0' },
    { capabilities: tasks ? TASK_CAPABILITIES : {} },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(`${origin}/v1/mcp/${project}`)));
  try {
    const { tools } = await client.listTools();
    return new Map(tools.map((t) => [t.name, t.execution?.taskSupport]));
  } finally {
    await client.close();
  }
}

describe('the configuration and bootstrap files', () => {
  it('set the policy, defaults applied, and audit it with the upstream', async () => {
    expect((await upstreamOf('cfg'))?.hosting).toMatchObject({
      tools: ['greet'],
      promoteAfterMs: 2000,
      repeatable: [],
    });
    expect((await upstreamOf('boot'))?.hosting).toMatchObject({
      tools: ['greet', 'slow_*'],
      promoteAfterMs: 500,
      repeatable: ['!greet'],
    });
    expect((await upstreamOf('demo'))?.hosting).toBeUndefined();
    const added = (await events('boot')).find((e) => e.action === 'upstream.added');
    expect(added?.detail.hosting).toEqual({
      tools: ['greet', 'slow_*'],
      promoteAfterMs: 500,
      repeatable: ['!greet'],
      callDeadlineMs: 3_600_000,
    });
  });

  it('a bootstrap document with a bad policy is refused, naming the field', async () => {
    const { parseBootstrapDocument } = await import('../../src/main/bootstrap');
    const doc = (hosting: unknown) => ({
      projects: [
        { slug: 'x', team: 'core', upstreams: [{ alias: 'a', url: 'http://127.0.0.1:1/mcp', hosting }] },
      ],
    });
    expect(() => parseBootstrapDocument(doc({ tools: ['greet'], promoteAfterMs: -1 }))).toThrow(
      /projects\[0\]\.upstreams\[0\]\.hosting\.promoteAfterMs/,
    );
    expect(() => parseBootstrapDocument(doc({ tools: ['ok'] }))).not.toThrow();
  });
});

describe('admin API', () => {
  it('PATCH sets, replaces and removes the policy; each change audited, restating it changes nothing', async () => {
    const set = await patch({ hosting: { tools: ['greet'] } });
    expect(set.status).toBe(200);
    expect(set.body.hosting).toMatchObject({ tools: ['greet'], promoteAfterMs: 2000, repeatable: [] });
    expect(set.body.hosting.maxConcurrent).toBeUndefined();
    const before = (await events('demo')).length;
    expect((await patch({ hosting: { tools: ['greet'], promoteAfterMs: 2000 } })).status).toBe(200);
    expect(await events('demo')).toHaveLength(before);

    const replaced = await patch({
      hosting: { tools: ['slow_*'], promoteAfterMs: 0, repeatable: ['slow_compute'], maxConcurrent: 2 },
    });
    expect(replaced.body.hosting).toMatchObject({
      tools: ['slow_*'],
      promoteAfterMs: 0,
      repeatable: ['slow_compute'],
      maxConcurrent: 2,
    });
    // Another setting leaves the policy as it is.
    expect((await patch({ enabled: true })).body.hosting).toMatchObject({ tools: ['slow_*'] });

    const removed = await patch({ hosting: null });
    expect(removed.status).toBe(200);
    expect(removed.body.hosting).toBeUndefined();
    expect((await upstreamOf('demo'))?.hosting).toBeUndefined();

    const updates = (await events('demo')).filter((e) => e.action === 'upstream.updated').slice(0, 3);
    expect(updates.map((e) => [e.detail.fields, e.detail.hosting?.tools ?? null])).toEqual([
      [['hosting'], null],
      [['hosting'], ['slow_*']],
      [['hosting'], ['greet']],
    ]);
  });

  it('POST creates an upstream with a policy', async () => {
    const created = await admin('POST', '/projects/boot/upstreams', {
      alias: 'second',
      url: gw.upstream.url,
      enabled: false,
      hosting: { tools: ['greet'], maxConcurrent: 3 },
    });
    expect(created.status).toBe(201);
    expect(created.body.hosting).toMatchObject({ tools: ['greet'], promoteAfterMs: 2000, maxConcurrent: 3 });
    expect((await admin('DELETE', '/projects/boot/upstreams/second')).status).toBe(204);
  });

  it('refuses bad input with an invalid error naming the field, like a bad auth, and changes nothing', async () => {
    expect((await patch({ hosting: { tools: ['greet'] } })).status).toBe(200);
    const auth = await patch({ auth: { mode: 'sometimes' } });
    expect(auth.status).toBe(400);
    expect(auth.body.error).toEqual({ code: 'invalid', message: expect.stringContaining('auth.mode') });
    const cases: Array<[unknown, string]> = [
      [{ tools: ['greet me'] }, 'hosting.tools[0]'],
      [{ tools: ['greet', 'bad['] }, 'hosting.tools[1]'],
      [{ tools: ['greet'], promoteAfterMs: -1 }, 'hosting.promoteAfterMs'],
      [{ tools: ['greet'], promoteAfterMs: '2s' }, 'hosting.promoteAfterMs'],
      [{ tools: ['greet'], repeatable: ['!'] }, 'hosting.repeatable[0]'],
      [{ tools: ['greet'], maxConcurrent: 0 }, 'hosting.maxConcurrent'],
      [{ tools: 'greet' }, 'hosting.tools'],
      [{ tool: ['greet'] }, 'hosting'],
      ['greet', 'hosting'],
    ];
    for (const [hosting, field] of cases) {
      const refused = await patch({ hosting });
      expect([hosting, refused.status, refused.body.error.code]).toEqual([hosting, 400, 'invalid']);
      expect(refused.body.error.message).toContain(field);
    }
    const badNew = await admin('POST', '/projects/boot/upstreams', {
      alias: 'third',
      url: gw.upstream.url,
      hosting: { tools: ['greet'], promoteAfterMs: 1.5 },
    });
    expect(badNew.status).toBe(400);
    expect(badNew.body.error.message).toContain('hosting.promoteAfterMs');
    expect(await upstreamOf('boot', 'third')).toBeUndefined();
    expect((await upstreamOf('demo'))?.hosting).toMatchObject({ tools: ['greet'] });
  });

  it('shows the rules that match none of the tools the gateway knows (accepted all the same)', async () => {
    const set = await patch({ hosting: { tools: ['greet', 'nothing_*'], repeatable: ['!gone', 'slow_*'] } });
    expect(set.status).toBe(200);
    // A call makes the gateway read the upstream's tools (its catalog), without a listing of its own.
    const called = await gw.client.callTool('greet', { name: 'Ada' }, { tasks: false });
    expect(called.body.result?.isError).not.toBe(true);
    expect((await upstreamOf('demo'))?.hosting).toMatchObject({ unmatched: ['nothing_*', 'gone'] });
    expect((await admin('GET', '/projects/demo')).body.upstreams[0].hosting.unmatched).toEqual([
      'nothing_*',
      'gone',
    ]);
    const all = await patch({ hosting: { tools: ['greet'] } });
    expect(all.body.hosting.unmatched).toEqual([]);
  });
});

describe('tools/list', () => {
  it('marks hosted tools taskSupport optional for a 2025-11-25 client that takes tasks, only those', async () => {
    expect((await patch({ hosting: { tools: ['greet'] } })).status).toBe(200);
    const listed = await legacyListing('demo', true);
    expect(listed.get('greet')).toBe('optional');
    expect(listed.has('slow_compute')).toBe(true);
    expect(listed.get('slow_compute')).toBeUndefined();
    // A client without task support, and a 2026-07-28 client: unchanged.
    expect((await legacyListing('demo', false)).get('greet')).toBeUndefined();
    const modern = await gw.client.request('tools/list');
    const tools = modern.body.result?.tools as Array<Record<string, unknown>>;
    expect(tools.find((t) => t.name === 'greet')).toBeDefined();
    expect(tools.find((t) => t.name === 'greet')?.execution).toBeUndefined();
    // The bootstrap file's globs.
    const boot = await legacyListing('boot', true);
    expect([
      boot.get('example.greet'),
      boot.get('example.slow_compute'),
      boot.get('example.failing_job'),
    ]).toEqual(['optional', 'optional', undefined]);
  });

  it('the project advertises tasks to a 2025-11-25 client while it hosts tools, not after', async () => {
    const tasksOf = async () => {
      const client = new Client(
        { name: 'hosting-test', version: '1.0.0' },
        { capabilities: TASK_CAPABILITIES },
      );
      await client.connect(new StreamableHTTPClientTransport(new URL(`${origin}/v1/mcp/demo`)));
      const tasks = client.getServerCapabilities()?.tasks;
      await client.close();
      return tasks;
    };
    expect((await patch({ hosting: { tools: ['greet'] } })).status).toBe(200);
    expect(await tasksOf()).toBeDefined();
    expect((await patch({ hosting: null })).status).toBe(200);
    expect(await tasksOf()).toBeUndefined();
    expect((await legacyListing('demo', true)).get('greet')).toBeUndefined();
  });
});

describe('CLI', () => {
  function cli(...args: string[]): Promise<CliOutcome> {
    const { store, encryption } = gw.config;
    return runAdminCli(args, adminCliEnv(path.join(dir, 'cli-config.json'), { store, encryption }));
  }

  /** The 2025 listing once the gateway serves the change the CLI wrote (its serving cache checks every 250 ms). */
  async function listingUntil(ok: (m: Map<string, string | undefined>) => boolean) {
    for (let i = 0; i < 50; i++) {
      const listed = await legacyListing('demo', true);
      if (ok(listed)) return listed;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the gateway did not serve the CLI change');
  }

  it('sets and removes the policy with --hosting JSON|off; bad input named', async () => {
    const update = (value: string) =>
      cli('upstream', 'update', '--project', 'demo', '--alias', 'example', '--hosting', value);
    const set = await update('{"tools":["slow_compute"],"promoteAfterMs":0}');
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout).hosting).toMatchObject({ tools: ['slow_compute'], promoteAfterMs: 0 });
    await listingUntil((m) => m.get('slow_compute') === 'optional' && m.get('greet') === undefined);

    const bad = await update('{"tools":["slow_compute"],"promoteAfterMs":-5}');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('hosting.promoteAfterMs');
    const notJson = await update('{tools');
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toContain('--hosting must be JSON');

    const off = await update('off');
    expect(off.code).toBe(0);
    expect(JSON.parse(off.stdout).hosting).toBeUndefined();
    await listingUntil((m) => m.get('slow_compute') === undefined);
    const trail = (await events('demo')).filter((e) => e.action === 'upstream.updated').slice(0, 2);
    expect(trail.map((e) => e.detail.hosting?.tools ?? null)).toEqual([null, ['slow_compute']]);
  });

  it('upstream add takes --hosting; the usage text names it', async () => {
    const added = await cli(
      'upstream',
      'add',
      '--project',
      'boot',
      '--alias',
      'cli',
      '--url',
      gw.upstream.url,
      '--enabled',
      'off',
      '--hosting',
      '{"tools":["greet"],"repeatable":["!greet"]}',
    );
    expect(added.code).toBe(0);
    expect(JSON.parse(added.stdout).hosting).toMatchObject({ tools: ['greet'], repeatable: ['!greet'] });
    expect((await upstreamOf('boot', 'cli'))?.hosting).toMatchObject({ tools: ['greet'] });
    expect((await admin('DELETE', '/projects/boot/upstreams/cli')).status).toBe(204);
    const { USAGE } = await import('../../src/main/admin-cli');
    expect(USAGE).toContain('--hosting');
  });
});
