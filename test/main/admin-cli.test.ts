/**
 * `taskrouter admin ...` as a child process (`node --import tsx`, and once through bin/taskrouter.mjs) on
 * the database under test, configured by TASKROUTER_CONFIG.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Cipher, generateKey } from '../../src/store/cipher';
import { ControlPlaneStore } from '../../src/store/control-plane';
import { openDatabase } from '../../src/store/database';
import { testStoreConfig, type TestStoreConfig } from '../helpers/store';

// Every command is a fresh Node process loading TypeScript through tsx (~1 s each, more on a busy box).
jest.setTimeout(180_000);

const run = promisify(execFile);
const root = path.join(__dirname, '../..');
const keyring = { activeKeyId: 'k1', keys: { k1: generateKey() } };
let dir: string;
let store: TestStoreConfig;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-cli-'));
  store = await testStoreConfig();
  const configFile = path.join(dir, 'config.json');
  const stdio = { catalog: { local: { command: 'node', settable: { root: { pattern: '[a-z]+' } } } } };
  writeFileSync(configFile, JSON.stringify({ store, encryption: keyring, stdio }));
  env = { ...process.env, TASKROUTER_CONFIG: configFile, UPSTREAM_SECRET: 'MARKER-cli-secret' };
  delete env['TASKROUTER_ENCRYPTION_KEYS'];
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function runAdmin(args: string[]): Promise<{ stdout: string }> {
  return run(process.execPath, ['--import', 'tsx', 'src/main/admin-cli.ts', 'admin', ...args], {
    cwd: root,
    env,
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON output, inspected field by field
async function cli(...args: string[]): Promise<any> {
  return JSON.parse((await runAdmin(args)).stdout);
}

async function cliFails(...args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    await runAdmin(args);
  } catch (err) {
    const e = err as { code: number; stderr: string };
    return { code: e.code, stderr: e.stderr };
  }
  throw new Error('expected the command to fail');
}

/** The arguments of `admin upstream <verb>` for upstream `alias` of project demo, then `rest`. */
function demoUpstream(verb: 'add' | 'update', alias: string, ...rest: string[]): string[] {
  return ['upstream', verb, '--project', 'demo', '--alias', alias, ...rest];
}

it('manages teams, users, projects, keys and upstreams through the same operations', async () => {
  expect(await cli('team', 'create', '--slug', 'core', '--name', 'Core')).toMatchObject({ slug: 'core' });
  await cli('user', 'create', '--handle', 'alice', '--name', 'Alice');
  await cli('team', 'add-member', '--team', 'core', '--user', 'alice');
  const project = await cli(
    'project',
    'create',
    '--slug',
    'demo',
    '--team',
    'core',
    '--tasks',
    'off',
    '--cache',
    '{"ttlMs":1234}',
  );
  expect(project).toMatchObject({ slug: 'demo', features: { tasks: false }, cache: { ttlMs: 1234 } });
  const upstream = await cli(
    ...demoUpstream(
      'add',
      'vault',
      '--url',
      'http://127.0.0.1:9/mcp',
      '--auth',
      'project',
      '--credential-env',
      'UPSTREAM_SECRET',
    ),
  );
  expect(upstream).toMatchObject({ alias: 'vault', auth: { mode: 'project' }, credentialSet: true });
  expect(JSON.stringify(upstream)).not.toContain('MARKER');
  const token = await cli('token', 'issue', '--user', 'alice', '--name', 'laptop');
  expect(token.token).toMatch(/^trp_/);
  const key = await cli('key', 'create', '--project', 'demo', '--name', 'ci');
  expect(key.key).toMatch(/^trk_/);
  const audit = await cli('audit', '--project', 'demo');
  expect(audit.map((e: { action: string }) => e.action)).toEqual(
    expect.arrayContaining(['project.created', 'upstream.added', 'api_key.created']),
  );
  expect(audit[0].actor).toBe('admin:cli');

  // The store sees what the CLI did.
  const db = await openDatabase(store);
  try {
    const cp = new ControlPlaneStore(db, new Cipher(keyring));
    const principal = (await cp.authenticate(token.token as string))!;
    const p = (await cp.projectBySlug('demo'))!;
    expect(await cp.canManageProject(principal, p)).toBe(true);
    expect(await cp.authenticate(key.key as string)).toMatchObject({ kind: 'api_key', projectId: p.id });
    expect(await cp.upstreamCredential(principal, p, p.upstreams[0]!)).toMatchObject({
      headers: { Authorization: 'Bearer MARKER-cli-secret' },
    });
  } finally {
    await db.destroy();
  }

  await cli('key', 'revoke', '--project', 'demo', '--id', key.id as string);
  expect((await cli('key', 'list', '--project', 'demo'))[0].revokedAt).not.toBeNull();
});

it('re-pointing an upstream drops its credential unless the same command gives it again', async () => {
  const moved = await cli(...demoUpstream('update', 'vault', '--url', 'http://127.0.0.1:9/other'));
  expect(moved).toMatchObject({
    url: 'http://127.0.0.1:9/other',
    credentialSet: false,
    addressApproved: true,
  });
  const given = await cli(
    ...demoUpstream(
      'update',
      'vault',
      '--url',
      'http://127.0.0.1:9/third',
      '--auth',
      'project',
      '--credential-env',
      'UPSTREAM_SECRET',
    ),
  );
  expect(given).toMatchObject({ url: 'http://127.0.0.1:9/third', credentialSet: true });
  const audit = await cli('audit', '--project', 'demo');
  expect(
    audit
      .filter((e: { action: string }) => e.action === 'upstream.credentials_dropped')
      .map((e: { detail: unknown }) => e.detail),
  ).toEqual([
    expect.objectContaining({ because: 'address_changed', projectCredential: false }),
    expect.objectContaining({ because: 'address_changed', projectCredential: true }),
  ]);
  expect(JSON.stringify(audit)).not.toContain('MARKER');
});

it('sets, keeps and removes token exchange on a per_user upstream, its secret never shown', async () => {
  const settings = '{"issuer":"https://login.example.com","clientId":"gw","audience":"crm-api"}';
  const added = await cli(
    'upstream',
    'add',
    '--project',
    'demo',
    '--alias',
    'crm',
    '--url',
    'http://127.0.0.1:9/crm',
    '--auth',
    'per_user',
    '--token-exchange',
    settings,
    '--credential-env',
    'UPSTREAM_SECRET',
  );
  expect(added.auth).toEqual({
    mode: 'per_user',
    tokenExchange: {
      issuer: 'https://login.example.com',
      clientId: 'gw',
      audience: 'crm-api',
      clientSecretSet: true,
    },
  });
  // An update that says nothing about auth but the header keeps the settings and the secret.
  const kept = await cli(...demoUpstream('update', 'crm', '--header', 'X-Crm-Token'));
  expect(kept.auth).toMatchObject({ header: 'X-Crm-Token', tokenExchange: { clientSecretSet: true } });
  const listed = await cli('upstream', 'list', '--project', 'demo');
  expect(JSON.stringify(listed)).not.toContain('MARKER');
  const off = await cli(...demoUpstream('update', 'crm', '--token-exchange', 'off'));
  // Like every auth change, it replaces the auth settings: the header goes unless restated.
  expect(off.auth).toEqual({ mode: 'per_user' });
  expect(
    (await cliFails(...demoUpstream('update', 'crm', '--token-exchange', '{"issuer":"nope"}'))).code,
  ).toBe(1);
});

it('applies a bootstrap file', async () => {
  const file = path.join(dir, 'bootstrap.json');
  writeFileSync(
    file,
    JSON.stringify({
      users: [{ handle: 'bob', name: 'Bob' }],
      projects: [{ slug: 'demo', team: 'core', members: ['bob'], upstreams: [] }],
    }),
  );
  expect((await cli('bootstrap', '--file', file)).changes).toEqual([
    'user bob created',
    'project demo: member bob',
  ]);
  expect((await cli('bootstrap', '--file', file)).changes).toEqual([]);
});

it('reports errors and usage with exit codes', async () => {
  const dup = await cliFails('team', 'create', '--slug', 'core');
  expect(dup.code).toBe(1);
  expect(dup.stderr).toMatch(/already exists \(conflict\)/);
  const usage = await cliFails('frobnicate');
  expect(usage.code).toBe(2);
  expect(usage.stderr).toMatch(/usage: taskrouter admin/);
  expect((await cliFails('project', 'show')).stderr).toMatch(/--project is required/);
  // A flag the usage text does not name (a typo) is refused, not silently ignored.
  const typo = await cliFails('project', 'update', '--project', 'p', '--namspacing', 'off');
  expect(typo.code).toBe(2);
  expect(typo.stderr).toMatch(/Unknown option '--namspacing'/);
  expect((await cliFails('user', 'show', '--user')).stderr).toMatch(/--user.*argument missing/);
});

it('runs through the bin script', async () => {
  const { stdout } = await run(
    process.execPath,
    [path.join(root, 'bin/taskrouter.mjs'), 'admin', 'team', 'list'],
    {
      cwd: os.tmpdir(),
      env,
    },
  );
  expect(JSON.parse(stdout).map((t: { slug: string }) => t.slug)).toEqual(['core']);
});

it('adds a stdio upstream by naming a catalog entry; refuses what the catalog does not declare', async () => {
  const added = await cli(...demoUpstream('add', 'local', '--url', 'stdio:local?root=abc'));
  expect(added).toMatchObject({ alias: 'local', url: 'stdio:local?root=abc' });
  const unknown = await cliFails(...demoUpstream('add', 'x', '--url', 'stdio:nope'));
  expect(unknown.stderr).toMatch(/url: stdio catalog entry "nope" is not in this gateway's catalog/);
  const outside = await cliFails(...demoUpstream('add', 'y', '--url', 'stdio:local?root=ABC'));
  expect(outside.stderr).toMatch(/url\.root: value "root" does not match/);
});
