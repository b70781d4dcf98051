/**
 * The control plane on the database under test (the `sqlite` and `postgres` jest projects): roles, tokens
 * and keys stored only as hashes, upstream credentials sealed at rest, per-user authorizations, and the
 * audit of every mutation these tests made (so they share one database and run in this order; deletion,
 * the gateway's own audit events and list changes are in control-plane-changes.test.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { Cipher, generateKey } from '../../src/store/cipher';
import { ControlPlaneStore } from '../../src/store/control-plane';
import { testDatabase } from '../helpers/store';
import {
  admin,
  alice,
  alpha,
  anonymous,
  bob,
  carol,
  clock,
  config,
  cp,
  db,
  expectCode,
  k1,
  reloadAlpha,
  setClock,
  sha256,
  useControlPlane,
} from './control-plane-fixture';

useControlPlane();

describe('roles', () => {
  it('a team member can change their team’s project', async () => {
    expect(await cp.canManageProject(alice, alpha)).toBe(true);
    expect(await cp.canCallProject(alice, alpha)).toBe(true);
    const { record, changed } = await cp.updateProject(alice, 'alpha', {
      features: { tasks: false },
      cache: { ttlMs: 5000 },
      limits: { overflow: 'compact' },
    });
    expect(changed).toBe(true);
    expect(record.features.tasks).toBe(false);
    expect(record.cache).toMatchObject({ ttlMs: 5000, enabled: true, maxEntries: 1000 });
    expect(record.limits).toEqual({ maxResultBytes: 1024 * 1024, overflow: 'compact' });
    // Partial cache updates merge into the current values.
    await cp.updateProject(alice, 'alpha', { cache: { maxEntries: 10 } });
    expect((await cp.projectBySlug('alpha'))!.cache).toMatchObject({ ttlMs: 5000, maxEntries: 10 });
    // Same values again: no change and no audit record.
    expect((await cp.updateProject(alice, 'alpha', { cache: { maxEntries: 10 } })).changed).toBe(false);
    await cp.updateProject(alice, 'alpha', { features: { tasks: true } });
  });

  it('a direct project member can call the project but cannot change it', async () => {
    expect(await cp.canCallProject(bob, alpha)).toBe(true);
    expect(await cp.canManageProject(bob, alpha)).toBe(false);
    await expectCode(cp.updateProject(bob, 'alpha', { namespacing: false }), 'forbidden');
    await expectCode(cp.createApiKey(bob, 'alpha', { name: 'x' }), 'forbidden');
    await expectCode(
      cp.addUpstream(bob, 'alpha', { alias: 'x', url: 'http://127.0.0.1:1/mcp' }),
      'forbidden',
    );
    await expectCode(cp.addProjectMember(bob, 'alpha', 'carol'), 'forbidden');
    await expectCode(cp.deleteProject(bob, 'alpha'), 'forbidden');
    await expectCode(cp.listAudit(bob, { project: 'alpha' }), 'forbidden');
    expect((await cp.projectBySlug('alpha'))!.namespacing).toBe(true);
    // The denied attempt is on the project's audit trail.
    const audit = await cp.listAudit(admin, { project: 'alpha' });
    expect(
      audit.some(
        (e) => e.action === 'access.denied' && e.actor === `user:${(bob as { userId: string }).userId}`,
      ),
    ).toBe(true);
  });

  it('a user of another team can neither call nor change the project', async () => {
    expect(await cp.canCallProject(carol, alpha)).toBe(false);
    expect(await cp.canManageProject(carol, alpha)).toBe(false);
    await expectCode(cp.updateProject(carol, 'alpha', { namespacing: false }), 'forbidden');
    await expectCode(cp.addTeamMember(carol, 'core', 'carol'), 'forbidden');
    await expectCode(cp.createProject(carol, { slug: 'sneaky', team: 'core' }), 'forbidden');
  });

  it('team members manage their team’s membership and may create projects for it; only the admin creates teams and users', async () => {
    await expectCode(cp.createTeam(alice, { slug: 'mine', name: 'Mine' }), 'forbidden');
    await expectCode(cp.createUser(alice, { handle: 'eve', name: 'Eve' }), 'forbidden');
    await cp.createProject(alice, { slug: 'alpha-2', team: 'core' });
    await cp.addTeamMember(alice, 'core', 'bob');
    expect(await cp.canManageProject(bob, alpha)).toBe(true);
    await cp.removeTeamMember(alice, 'core', 'bob');
    expect(await cp.canManageProject(bob, alpha)).toBe(false);
    expect(await cp.canCallProject(bob, alpha)).toBe(true); // still a direct member
    // Team membership changes are recorded on each of the team's projects.
    const actions = (await cp.listAudit(alice, { project: 'alpha' })).map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['team.member_added', 'team.member_removed']));
    await cp.deleteProject(alice, 'alpha-2');
  });

  it('anonymous projects accept anyone but a foreign API key; required projects refuse anonymous callers', async () => {
    expect(await cp.canCallProject(anonymous, alpha)).toBe(false);
    await cp.createProject(admin, { slug: 'open', team: 'other', authMode: 'anonymous' });
    const open = (await cp.projectBySlug('open'))!;
    expect(await cp.canCallProject(anonymous, open)).toBe(true);
    expect(await cp.canCallProject(alice, open)).toBe(true);
    const { key } = await cp.createApiKey(alice, 'alpha', { name: 'ci' });
    const principal = (await cp.authenticate(key))!;
    expect(await cp.canCallProject(principal, alpha)).toBe(true);
    expect(await cp.canCallProject(principal, open)).toBe(false);
    await cp.deleteProject(admin, 'open');
  });

  it('rejects invalid input and duplicates with clear codes', async () => {
    await expectCode(cp.createProject(admin, { slug: 'Bad Slug', team: 'core' }), 'invalid');
    await expectCode(cp.createProject(admin, { slug: 'alpha', team: 'core' }), 'conflict');
    await expectCode(cp.createProject(admin, { slug: 'gamma', team: 'nope' }), 'not_found');
    await expectCode(cp.updateProject(admin, 'alpha', { cache: { ttlMs: -1 } }), 'invalid');
    await expectCode(cp.updateProject(admin, 'alpha', { cache: { unknown: 1 } }), 'invalid');
    await expectCode(cp.createTeam(admin, { slug: 'core', name: 'again' }), 'conflict');
    await expectCode(
      cp.addUpstream(admin, 'alpha', {
        alias: 'h',
        url: 'http://x/mcp',
        auth: { mode: 'project', header: 'Host' },
      }),
      'invalid',
    );
    await expectCode(cp.addUpstream(admin, 'alpha', { alias: 'f', url: 'file:///etc/passwd' }), 'invalid');
  });
});

describe('tokens and keys', () => {
  it('personal access tokens: trp_ prefix, shown once, stored only as a hash, revocable', async () => {
    const { token, record } = await cp.issueUserToken(alice, 'alice', {
      name: 'laptop',
    });
    expect(token).toMatch(/^trp_[A-Za-z0-9_-]{43}$/);
    expect(record).not.toHaveProperty('token');
    expect(JSON.stringify(record)).not.toContain(token.slice(4));
    expect(await cp.authenticate(token)).toEqual(alice);
    const row = await db
      .selectFrom('user_tokens')
      .selectAll()
      .where('id', '=', record.id)
      .executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(sha256(token));
    expect(Object.values(row).some((v) => typeof v === 'string' && v.includes(token.slice(8)))).toBe(false);
    // Listings show a hint only.
    const [listed] = (await cp.listUserTokens(alice, 'alice')).filter((t) => t.id === record.id);
    expect(listed).toEqual(record);
    // Other users cannot see or revoke it; its owner can.
    await expectCode(cp.listUserTokens(bob, 'alice'), 'forbidden');
    await expectCode(cp.revokeToken(bob, record.id), 'not_found');
    await cp.revokeToken(alice, record.id);
    expect(await cp.authenticate(token)).toBeUndefined();
  });

  it('expired tokens no longer authenticate', async () => {
    const { token } = await cp.issueUserToken(admin, 'bob', {
      name: 'short',
      expiresAt: new Date(clock.getTime() + 60_000).toISOString(),
    });
    expect(await cp.authenticate(token)).toEqual(bob);
    const saved = clock;
    setClock(new Date(clock.getTime() + 120_000));
    expect(await cp.authenticate(token)).toBeUndefined();
    setClock(saved);
    await expectCode(
      cp.issueUserToken(bob, 'bob', { name: 'past', expiresAt: '2000-01-01T00:00:00Z' }),
      'invalid',
    );
  });

  it('project API keys: trk_ prefix, stored only as a hash, revocable by team members', async () => {
    const { key, record } = await cp.createApiKey(alice, 'alpha', { name: 'deploy' });
    expect(key).toMatch(/^trk_[A-Za-z0-9_-]{43}$/);
    expect(await cp.authenticate(key)).toEqual({ kind: 'api_key', keyId: record.id, projectId: alpha.id });
    const row = await db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', record.id)
      .executeTakeFirstOrThrow();
    expect(row.key_hash).toBe(sha256(key));
    expect(JSON.stringify(await cp.listApiKeys(alice, 'alpha'))).not.toContain(key.slice(8));
    await cp.revokeApiKey(alice, 'alpha', record.id);
    expect(await cp.authenticate(key)).toBeUndefined();
    expect(await cp.authenticate('trk_unknown')).toBeUndefined();
    expect(await cp.authenticate('something-else')).toBeUndefined();
  });

  it('bootstrap-style preset tokens are admin-only, well-formed and idempotent', async () => {
    const token = 'trp_preset-token-for-the-demo-0001';
    await expectCode(cp.ensureUserToken(alice, 'alice', { name: 'demo', token }), 'forbidden');
    await expectCode(cp.ensureUserToken(admin, 'alice', { name: 'demo', token: 'trp_short' }), 'invalid');
    await expectCode(
      cp.ensureUserToken(admin, 'alice', { name: 'demo', token: 'trk_preset-token-for-the-demo' }),
      'invalid',
    );
    expect((await cp.ensureUserToken(admin, 'alice', { name: 'demo', token })).changed).toBe(true);
    expect((await cp.ensureUserToken(admin, 'alice', { name: 'demo', token })).changed).toBe(false);
    await expectCode(cp.ensureUserToken(admin, 'bob', { name: 'demo', token }), 'conflict');
    expect(await cp.authenticate(token)).toEqual(alice);
  });
});

describe('upstream credentials', () => {
  const MARKER = 'MARKER-cred-7f3a9c1e-do-not-store';
  const USER_MARKER = 'MARKER-user-grant-51d2e8b0';

  beforeAll(async () => {
    await cp.addUpstream(alice, 'alpha', { alias: 'open', url: 'http://127.0.0.1:9/open' });
    await cp.addUpstream(alice, 'alpha', {
      alias: 'vault',
      url: 'http://127.0.0.1:9/vault',
      auth: { mode: 'project', credential: MARKER },
    });
    await cp.addUpstream(alice, 'alpha', {
      alias: 'apikey',
      url: 'http://127.0.0.1:9/apikey',
      auth: { mode: 'project', header: 'X-Api-Key', credential: `${MARKER}-2` },
    });
    await cp.addUpstream(alice, 'alpha', {
      alias: 'nocred',
      url: 'http://127.0.0.1:9/n',
      auth: { mode: 'project' },
    });
    await cp.addUpstream(alice, 'alpha', {
      alias: 'github',
      url: 'http://127.0.0.1:9/gh',
      auth: { mode: 'per_user' },
    });
    await reloadAlpha();
  });

  const upstream = (alias: string) => alpha.upstreams.find((u) => u.alias === alias)!;

  it('maps to the project record the gateway serves, without credentials', async () => {
    expect(alpha.upstreams.map((u) => u.alias)).toEqual(['apikey', 'github', 'nocred', 'open', 'vault']);
    expect(upstream('apikey')).toEqual({
      id: expect.stringMatching(/^ups_/),
      alias: 'apikey',
      url: 'http://127.0.0.1:9/apikey',
      enabled: true,
      auth: { mode: 'project', header: 'X-Api-Key' },
      // A project manager set the address: its connections obey the address policy.
      addressApproved: false,
    });
    expect(JSON.stringify(alpha)).not.toContain(MARKER);
    expect(JSON.stringify(await cp.getProject(alice, 'alpha'))).not.toContain(MARKER);
    expect(
      (await cp.getProject(alice, 'alpha')).upstreams.find((u) => u.alias === 'vault')!.credentialSet,
    ).toBe(true);
  });

  it('none and project modes', async () => {
    expect(await cp.upstreamCredential(bob, alpha, upstream('open'))).toEqual({
      ok: true,
      headers: {},
      authorizationId: null,
    });
    // A credential says where it was given for: it is used for that address only.
    expect(await cp.upstreamCredential(bob, alpha, upstream('vault'))).toEqual({
      ok: true,
      headers: { Authorization: `Bearer ${MARKER}` },
      authorizationId: null,
      boundTo: 'http://127.0.0.1:9/vault',
    });
    expect(await cp.upstreamCredential(alice, alpha, upstream('apikey'))).toEqual({
      ok: true,
      headers: { 'X-Api-Key': `${MARKER}-2` },
      authorizationId: null,
      boundTo: 'http://127.0.0.1:9/apikey',
    });
    expect(await cp.upstreamCredential(alice, alpha, upstream('nocred'))).toEqual({
      ok: false,
      reason: 'Upstream "nocred" needs a project credential; none is configured',
    });
    // A caller without access to the project gets nothing, whatever the mode.
    expect(await cp.upstreamCredential(carol, alpha, upstream('vault'))).toMatchObject({ ok: false });
  });

  it('per-user mode: none granted, granted, refreshed, revoked, expired', async () => {
    const github = upstream('github');
    expect(await cp.upstreamCredential(bob, alpha, github)).toEqual({
      ok: false,
      reason: 'Upstream "github" needs your authorization; none granted',
    });
    // Bob (a direct member) grants his own; alice (team) cannot grant on his behalf, nor carol for herself.
    await expectCode(
      cp.grantUpstreamAuthorization(alice, 'alpha', 'github', { credential: 'x', user: 'bob' }),
      'forbidden',
    );
    await expectCode(
      cp.grantUpstreamAuthorization(carol, 'alpha', 'github', { credential: 'x' }),
      'forbidden',
    );
    await expectCode(cp.grantUpstreamAuthorization(bob, 'alpha', 'vault', { credential: 'x' }), 'invalid');
    const granted = await cp.grantUpstreamAuthorization(bob, 'alpha', 'github', { credential: USER_MARKER });
    expect(granted).toMatchObject({
      status: 'active',
      upstreamAlias: 'github',
      userId: (bob as { userId: string }).userId,
    });
    expect(JSON.stringify(granted)).not.toContain(USER_MARKER);
    expect(await cp.upstreamCredential(bob, alpha, github)).toEqual({
      ok: true,
      headers: { Authorization: `Bearer ${USER_MARKER}` },
      authorizationId: granted.id,
      boundTo: 'http://127.0.0.1:9/gh',
    });
    // Exactly the caller's own: alice has none even though bob has one.
    expect(await cp.upstreamCredential(alice, alpha, github)).toMatchObject({ ok: false });
    expect(await cp.authorizationValid(granted.id)).toBe(true);

    // A new grant while active refreshes in place: same id, new token.
    const refreshed = await cp.grantUpstreamAuthorization(bob, 'alpha', 'github', {
      credential: `${USER_MARKER}-v2`,
      expiresAt: new Date(clock.getTime() + 3600_000).toISOString(),
    });
    expect(refreshed.id).toBe(granted.id);
    expect(await cp.upstreamCredential(bob, alpha, github)).toMatchObject({
      ok: true,
      headers: { Authorization: `Bearer ${USER_MARKER}-v2` },
    });

    // Expiry.
    const saved = clock;
    setClock(new Date(clock.getTime() + 2 * 3600_000));
    expect(await cp.authorizationValid(granted.id)).toBe(false);
    expect(await cp.upstreamCredential(bob, alpha, github)).toEqual({
      ok: false,
      reason: `Upstream "github" needs your authorization; yours expired at ${refreshed.expiresAt}`,
    });
    setClock(saved);

    // Revocation (by a project manager on bob's behalf), then a fresh grant gets a new id.
    const revoked = await cp.revokeUpstreamAuthorization(alice, 'alpha', 'github', { user: 'bob' });
    expect(revoked.status).toBe('revoked');
    expect(await cp.authorizationValid(granted.id)).toBe(false);
    expect(await cp.upstreamCredential(bob, alpha, github)).toEqual({
      ok: false,
      reason: 'Upstream "github" needs your authorization; yours was revoked',
    });
    await expectCode(cp.revokeUpstreamAuthorization(bob, 'alpha', 'github'), 'not_found');
    const again = await cp.grantUpstreamAuthorization(bob, 'alpha', 'github', { credential: USER_MARKER });
    expect(again.id).not.toBe(granted.id);
    expect(await cp.authorizationValid(again.id)).toBe(true);

    const actions = (await cp.listAudit(alice, { project: 'alpha' })).map((e) => e.action);
    expect(actions).toEqual(
      expect.arrayContaining(['authorization.granted', 'authorization.refreshed', 'authorization.revoked']),
    );
    // Users list their own; managers see everyone's.
    expect(
      (await cp.listUpstreamAuthorizations(bob, 'alpha')).every(
        (a) => a.userId === (bob as { userId: string }).userId,
      ),
    ).toBe(true);
    await expectCode(cp.listUpstreamAuthorizations(carol, 'alpha'), 'forbidden');
  });

  it('API-key and anonymous callers get a clear reason on per-user upstreams', async () => {
    const { key } = await cp.createApiKey(alice, 'alpha', { name: 'bot' });
    const principal = (await cp.authenticate(key))!;
    const result = await cp.upstreamCredential(principal, alpha, upstream('github'));
    expect(result).toEqual({
      ok: false,
      reason: expect.stringMatching(
        /^Upstream "github" needs each user's own authorization; API key callers have none/,
      ),
    });
    expect(await cp.upstreamCredential(principal, alpha, upstream('vault'))).toMatchObject({ ok: true });
  });

  it('disabled upstreams refuse; updates re-seal credentials and are no-ops when nothing changes', async () => {
    await cp.updateUpstream(alice, 'alpha', 'open', { enabled: false });
    await reloadAlpha();
    expect(await cp.upstreamCredential(alice, alpha, upstream('open'))).toEqual({
      ok: false,
      reason: 'Upstream "open" is disabled',
    });
    await cp.updateUpstream(alice, 'alpha', 'open', { enabled: true });
    const same = await cp.updateUpstream(alice, 'alpha', 'vault', {
      auth: { mode: 'project', credential: MARKER },
    });
    expect(same.changed).toBe(false);
    await cp.updateUpstream(alice, 'alpha', 'nocred', {
      auth: { mode: 'project', credential: `${MARKER}-3` },
    });
    await reloadAlpha();
    expect(await cp.upstreamCredential(alice, alpha, upstream('nocred'))).toMatchObject({
      ok: true,
      headers: { Authorization: `Bearer ${MARKER}-3` },
    });
  });

  it('a sealed credential copied to another upstream does not open (associated data)', async () => {
    const vault = await db
      .selectFrom('upstreams')
      .select('credential')
      .where('id', '=', upstream('vault').id)
      .executeTakeFirstOrThrow();
    const scratch = await cp.addUpstream(alice, 'alpha', {
      alias: 'copy',
      url: 'http://127.0.0.1:9/copy',
      auth: { mode: 'project', credential: 'placeholder' },
    });
    await db
      .updateTable('upstreams')
      .set({ credential: vault.credential })
      .where('id', '=', scratch.id)
      .execute();
    const copy = (await cp.projectBySlug('alpha'))!.upstreams.find((u) => u.alias === 'copy')!;
    await expect(cp.upstreamCredential(alice, alpha, copy)).rejects.toThrow();
    await cp.removeUpstream(alice, 'alpha', 'copy');
  });

  it('credentials open after key rotation (key ids)', async () => {
    const k2 = generateKey();
    const rotated = new ControlPlaneStore(db, new Cipher({ activeKeyId: 'k2', keys: { k1, k2 } }));
    expect(await rotated.upstreamCredential(alice, alpha, upstream('vault'))).toMatchObject({
      ok: true,
      headers: { Authorization: `Bearer ${MARKER}` },
    });
  });

  it('never appear in plaintext in the database', async () => {
    const markers = [MARKER, USER_MARKER];
    if (testDatabase() === 'sqlite' && 'sqliteFile' in config) {
      // The raw bytes of the database file and its write-ahead log, as they sit on disk.
      const files = [config.sqliteFile, `${config.sqliteFile}-wal`].filter((f) => existsSync(f));
      const bytes = Buffer.concat(files.map((f) => readFileSync(f)));
      // Positive control: non-secret values written alongside are visible in the same bytes.
      expect(bytes.includes(Buffer.from('http://127.0.0.1:9/vault'))).toBe(true);
      for (const m of markers) {
        expect(bytes.includes(Buffer.from(m, 'utf8'))).toBe(false);
        expect(bytes.includes(Buffer.from(m, 'utf16le'))).toBe(false);
      }
    } else {
      // PostgreSQL: every value of every control-plane table, as the server returns it.
      const tables = [
        'upstreams',
        'upstream_authorizations',
        'audit_events',
        'projects',
        'user_tokens',
        'api_keys',
      ] as const;
      for (const t of tables) {
        const rows = await db.selectFrom(t).selectAll().execute();
        for (const row of rows) {
          for (const v of Object.values(row)) {
            const bytes = Buffer.isBuffer(v) ? v : Buffer.from(String(v));
            for (const m of markers) expect(bytes.includes(Buffer.from(m))).toBe(false);
          }
        }
      }
    }
  });
});

describe('audit and deletion', () => {
  it('every mutation is audited, without secrets', async () => {
    const events = await cp.listAudit(admin, { limit: 1000 });
    const actions = new Set(events.map((e) => e.action));
    for (const a of [
      'user.created',
      'team.created',
      'team.member_added',
      'project.created',
      'project.updated',
      'project.member_added',
      'api_key.created',
      'api_key.revoked',
      'user.token_issued',
      'user.token_revoked',
      'upstream.added',
      'upstream.updated',
      'upstream.removed',
      'project.deleted',
    ]) {
      expect(actions).toContain(a);
    }
    expect(JSON.stringify(events)).not.toMatch(/MARKER|trp_[A-Za-z0-9_-]{20}|trk_[A-Za-z0-9_-]{20}/);
    // Newest first, paginated by id.
    const [first, second] = events;
    expect(first!.id > second!.id).toBe(true);
    expect((await cp.listAudit(admin, { before: first!.id, limit: 1 }))[0]!.id).toBe(second!.id);
    await expectCode(cp.listAudit(alice), 'forbidden');
  });
});
