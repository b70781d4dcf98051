/** The declarative bootstrap document, applied idempotently through the control plane. */
import type { Kysely } from 'kysely';
import type { BootstrapDocument } from '../../src/main/bootstrap';
import { applyBootstrap, parseBootstrapDocument } from '../../src/main/bootstrap';
import { Cipher, generateKey } from '../../src/store/cipher';
import { ControlPlaneStore } from '../../src/store/control-plane';
import type { Principal } from '../../src/store/control-plane/types';
import { openDatabase } from '../../src/store/database';
import type { Database } from '../../src/store/schema';
import { testStoreConfig } from '../helpers/store';

const ALICE_TOKEN = 'trp_demo-alice-0000000000000000000000';
const BOB_TOKEN = 'trp_demo-bob-00000000000000000000000000';
const DEMO_KEY = 'trk_demo-key-00000000000000000000000000';

const doc: BootstrapDocument = {
  users: [
    { handle: 'alice', name: 'Alice', tokens: [{ name: 'demo', token: ALICE_TOKEN }] },
    { handle: 'bob', name: 'Bob', tokens: [{ name: 'demo', token: BOB_TOKEN }] },
  ],
  teams: [{ slug: 'core', name: 'Core', members: ['alice'] }],
  projects: [
    {
      slug: 'demo',
      team: 'core',
      features: { tasks: true },
      cache: { ttlMs: 30_000 },
      members: ['bob'],
      apiKeys: [{ name: 'demo', key: DEMO_KEY }],
      upstreams: [
        { alias: 'example', url: 'http://127.0.0.1:3001/mcp' },
        {
          alias: 'vault',
          url: 'http://127.0.0.1:3002/mcp',
          auth: { mode: 'project', credential: 'vault-secret-1' },
        },
        { alias: 'github', url: 'http://127.0.0.1:3003/mcp', auth: { mode: 'per_user' } },
      ],
    },
  ],
};

let db: Kysely<Database>;
let cp: ControlPlaneStore;
const admin: Principal = { kind: 'admin' };

beforeAll(async () => {
  db = await openDatabase(await testStoreConfig());
  cp = new ControlPlaneStore(db, new Cipher({ activeKeyId: 'k1', keys: { k1: generateKey() } }));
});

afterAll(async () => {
  await db?.destroy();
});

async function counts(): Promise<Record<string, number>> {
  const tables = [
    'teams',
    'users',
    'team_members',
    'user_tokens',
    'projects',
    'project_members',
    'api_keys',
    'upstreams',
    'audit_events',
  ] as const;
  const out: Record<string, number> = {};
  for (const t of tables) {
    const { n } = await db
      .selectFrom(t)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    out[t] = Number(n);
  }
  return out;
}

it('creates everything on the first run', async () => {
  const result = await applyBootstrap(cp, doc);
  expect(result.changes).toEqual(
    expect.arrayContaining(['user alice created', 'team core created', 'project demo created']),
  );
  const project = (await cp.projectBySlug('demo'))!;
  expect(project).toMatchObject({
    slug: 'demo',
    authMode: 'required',
    toolProfile: 'tasks',
    features: { tasks: true },
    namespacing: true,
    cache: { ttlMs: 30_000, enabled: true },
  });
  expect(project.upstreams.map((u) => [u.alias, u.auth.mode])).toEqual([
    ['example', 'none'],
    ['github', 'per_user'],
    ['vault', 'project'],
  ]);
  const alice = (await cp.authenticate(ALICE_TOKEN))!;
  const bob = (await cp.authenticate(BOB_TOKEN))!;
  expect(await cp.canManageProject(alice, project)).toBe(true);
  expect(await cp.canCallProject(bob, project)).toBe(true);
  expect(await cp.canManageProject(bob, project)).toBe(false);
  expect(await cp.authenticate(DEMO_KEY)).toMatchObject({ kind: 'api_key', projectId: project.id });
  const vault = project.upstreams.find((u) => u.alias === 'vault')!;
  expect(await cp.upstreamCredential(bob, project, vault)).toMatchObject({
    ok: true,
    headers: { Authorization: 'Bearer vault-secret-1' },
  });
  // Stored as hashes only.
  const rows = await db.selectFrom('user_tokens').select('token_hash').execute();
  expect(rows.map((r) => r.token_hash)).not.toContain(ALICE_TOKEN);
  // Recorded as the bootstrap's doing.
  expect((await cp.listAudit(admin, { limit: 1 }))[0]!.actor).toBe('admin:bootstrap');
});

it('is idempotent: a second run changes nothing and writes no audit records', async () => {
  const before = await counts();
  const result = await applyBootstrap(cp, doc);
  expect(result.changes).toEqual([]);
  expect(await counts()).toEqual(before);
});

it('updates what differs and leaves what the file does not mention', async () => {
  // A change made through the API (another direct member) survives.
  await cp.createUser(admin, { handle: 'carol', name: 'Carol' });
  await cp.addProjectMember(admin, 'demo', 'carol');
  const changed = structuredClone(doc);
  const project = changed.projects![0]!;
  project.cache = { maxEntries: 5 };
  project.upstreams = [
    {
      alias: 'vault',
      url: 'http://127.0.0.1:3002/mcp',
      auth: { mode: 'project', credential: 'vault-secret-2' },
    },
  ];
  const result = await applyBootstrap(cp, changed);
  expect(result.changes).toEqual(['project demo updated', 'project demo: upstream vault updated']);
  const p = (await cp.projectBySlug('demo'))!;
  expect(p.cache).toMatchObject({ ttlMs: 30_000, maxEntries: 5 });
  expect(p.upstreams).toHaveLength(3);
  const carol = (await cp.getUser(admin, 'carol')).projects;
  expect(carol.map((x) => x.slug)).toEqual(['demo']);
  const vault = p.upstreams.find((u) => u.alias === 'vault')!;
  expect(await cp.upstreamCredential((await cp.authenticate(ALICE_TOKEN))!, p, vault)).toMatchObject({
    headers: { Authorization: 'Bearer vault-secret-2' },
  });
  expect((await applyBootstrap(cp, changed)).changes).toEqual([]);
});

it('a re-applied file that moves an upstream gives the credentials it names again and drops the others', async () => {
  const alice = (await cp.authenticate(ALICE_TOKEN))!;
  const bob = (await cp.authenticate(BOB_TOKEN))!;
  await cp.grantUpstreamAuthorization(bob, 'demo', 'github', { credential: 'bob-github-token' });
  const moved = structuredClone(doc);
  moved.projects![0]!.upstreams = [
    // The credential is named again: given for the new address.
    {
      alias: 'vault',
      url: 'http://127.0.0.1:3012/mcp',
      auth: { mode: 'project', credential: 'vault-secret-2' },
    },
    // Moved without naming a credential: what was given for the old address goes.
    { alias: 'github', url: 'http://127.0.0.1:3013/mcp', auth: { mode: 'per_user' } },
  ];
  expect((await applyBootstrap(cp, moved)).changes).toEqual([
    'project demo: upstream vault updated',
    'project demo: upstream github updated',
  ]);
  const p = (await cp.projectBySlug('demo'))!;
  const vault = p.upstreams.find((u) => u.alias === 'vault')!;
  expect(await cp.upstreamCredential(alice, p, vault)).toMatchObject({
    headers: { Authorization: 'Bearer vault-secret-2' },
    boundTo: 'http://127.0.0.1:3012/mcp',
  });
  const github = p.upstreams.find((u) => u.alias === 'github')!;
  expect(await cp.upstreamCredential(bob, p, github)).toMatchObject({
    ok: false,
    reason: expect.stringContaining('yours was revoked'),
  });
  // The bootstrap file is the operator's: its addresses are approved.
  expect(p.upstreams.every((u) => u.addressApproved)).toBe(true);
  const drops = (await cp.listAudit(admin, { project: 'demo' })).filter(
    (e) => e.action === 'upstream.credentials_dropped',
  );
  expect(drops.map((e) => e.detail)).toEqual([
    expect.objectContaining({ alias: 'github', projectCredential: false, authorizations: 1 }),
    expect.objectContaining({ alias: 'vault', projectCredential: false, authorizations: 0 }),
  ]);
  expect((await applyBootstrap(cp, moved)).changes).toEqual([]);

  // Moved once more without the credential: the project credential goes too.
  moved.projects![0]!.upstreams = [
    { alias: 'vault', url: 'http://127.0.0.1:3022/mcp', auth: { mode: 'project' } },
  ];
  await applyBootstrap(cp, moved);
  const v = (await cp.listUpstreams(admin, 'demo')).find((u) => u.alias === 'vault')!;
  expect(v.credentialSet).toBe(false);
});

it('rejects malformed documents and misused secrets', async () => {
  expect(() => parseBootstrapDocument({ teams: [{ slug: 'Bad Slug' }] })).toThrow(
    /Invalid bootstrap document/,
  );
  expect(() => parseBootstrapDocument({ unknown: [] })).toThrow(/Invalid bootstrap document/);
  await expect(
    applyBootstrap(cp, { users: [{ handle: 'dave', tokens: [{ name: 't', token: 'trp_short' }] }] }),
  ).rejects.toMatchObject({ code: 'invalid' });
  // A token already belonging to another user is a conflict, never shared.
  await expect(
    applyBootstrap(cp, { users: [{ handle: 'erin', tokens: [{ name: 't', token: ALICE_TOKEN }] }] }),
  ).rejects.toMatchObject({ code: 'conflict' });
});
