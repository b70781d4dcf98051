/**
 * Credentials stay where they were given (issue 22, finding 2), on the database under test: re-pointing
 * an upstream drops its project credential, client secret, every user's authorization and its OAuth
 * connections in the same change, revokes the connections where they were issued, and audits it with
 * counts only; the gateway never pairs a credential with another address than the one it was read for;
 * a connection's grant and a running task refuse an upstream that moved. And who may set an address:
 * operators' are approved, managers' are checked by the address policy.
 */
import type { Kysely } from 'kysely';
import { resolveEndpoint, resolveTaskEndpoint } from '../../src/store/control-plane/endpoints';
import { Cipher, generateKey } from '../../src/store/cipher';
import type { RevokeAtServer } from '../../src/store/control-plane';
import { ControlPlaneStore } from '../../src/store/control-plane';
import type { Principal } from '../../src/store/control-plane/types';
import { openDatabase } from '../../src/store/database';
import { OAuthClientStore } from '../../src/store/control-plane/oauth-clients';
import type { Database } from '../../src/store/schema';
import { UpstreamSessionStore } from '../../src/store/sessions/upstream-sessions';
import { testStoreConfig } from '../helpers/store';

const cipher = new Cipher({ activeKeyId: 'k1', keys: { k1: generateKey() } });
const admin: Principal = { kind: 'admin', via: 'api' };
const PROJECT_SECRET = 'MARKER-project-cred-8d1f';
const CLIENT_SECRET = 'MARKER-client-secret-77aa';
const TOKEN = (who: string) => `MARKER-token-${who}-41c9`;
const REFRESH = (who: string) => `MARKER-refresh-${who}-0b3e`;

let db: Kysely<Database>;
let cp: ControlPlaneStore;
let alice: Principal; // team member: manages `alpha`
let bob: Principal; // direct member of `alpha`
const revoked: Array<Parameters<RevokeAtServer>[0]> = [];
/** What the address policy refuses here: any URL on host `internal.test`. */
const checked: string[] = [];

beforeAll(async () => {
  db = await openDatabase(await testStoreConfig());
  cp = new ControlPlaneStore(db, cipher, {
    revokeAtServer: async (r) => void revoked.push(r),
    checkUpstreamAddress: async (url) => {
      checked.push(url);
      if (new URL(url).hostname === 'internal.test')
        throw new Error('internal.test is in a network managers may not use');
    },
  });
  const a = await cp.createUser(admin, { handle: 'alice', name: 'Alice' });
  const b = await cp.createUser(admin, { handle: 'bob', name: 'Bob' });
  alice = { kind: 'user', userId: a.id };
  bob = { kind: 'user', userId: b.id };
  await cp.createTeam(admin, { slug: 'core', name: 'Core' });
  await cp.addTeamMember(admin, 'core', 'alice');
  await cp.createProject(admin, { slug: 'alpha', team: 'core' });
  await cp.addProjectMember(alice, 'alpha', 'bob');
});

afterAll(async () => {
  await db?.destroy();
});

beforeEach(() => {
  revoked.length = 0;
  checked.length = 0;
});

const upstreamOf = async (alias: string) => {
  const project = (await cp.projectBySlug('alpha'))!;
  return { project, upstream: project.upstreams.find((u) => u.alias === alias)! };
};
const view = async (alias: string) =>
  (await cp.listUpstreams(admin, 'alpha')).find((u) => u.alias === alias)!;
const auditOf = async (action: string) =>
  (await cp.listAudit(admin, { project: 'alpha' })).filter((e) => e.action === action);

/** A user's OAuth connection to `alias`, as the connect flow leaves it (tokens issued to `clientRow`). */
async function connect(who: Principal & { kind: 'user' }, alias: string, clientRow: string) {
  const granted = await cp.grantUpstreamAuthorization(who, 'alpha', alias, {
    credential: TOKEN(who.userId),
    expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
  });
  await cp.attachRenewal(granted.id, {
    refreshToken: REFRESH(who.userId),
    clientId: clientRow,
    resource: 'r',
  });
  return granted;
}

describe('re-pointing an upstream', () => {
  it('drops the project credential in the same change, says so, and audits counts only', async () => {
    await cp.addUpstream(alice, 'alpha', {
      alias: 'vault',
      url: 'https://old.example/mcp',
      auth: { mode: 'project', credential: PROJECT_SECRET },
    });
    expect((await view('vault')).credentialSet).toBe(true);
    const before = await upstreamOf('vault');
    expect(await cp.upstreamCredential(bob, before.project, before.upstream)).toMatchObject({ ok: true });

    const { record, changed } = await cp.updateUpstream(alice, 'alpha', 'vault', {
      url: 'https://new.example/mcp',
    });
    expect(changed).toBe(true);
    expect(record.credentialSet).toBe(false);
    expect((await view('vault')).credentialSet).toBe(false);
    const after = await upstreamOf('vault');
    expect(after.upstream.url).toBe('https://new.example/mcp');
    expect(await cp.upstreamCredential(bob, after.project, after.upstream)).toEqual({
      ok: false,
      reason: 'Upstream "vault" needs a project credential; none is configured',
    });

    const [updated] = await auditOf('upstream.updated');
    expect(updated?.detail).toMatchObject({ fields: expect.arrayContaining(['url', 'credential']) });
    const [dropped] = await auditOf('upstream.credentials_dropped');
    expect(dropped?.detail).toEqual({
      upstreamId: after.upstream.id,
      alias: 'vault',
      because: 'address_changed',
      projectCredential: true,
      oauthClientSecret: false,
      authorizations: 0,
      oauthConnections: 0,
    });
    expect(JSON.stringify(await cp.listAudit(admin, {}))).not.toContain('MARKER');
  });

  it('binds a credential given in the same change to the new address (a restated one too)', async () => {
    await cp.updateUpstream(alice, 'alpha', 'vault', {
      url: 'https://newer.example/mcp',
      auth: { mode: 'project', credential: `${PROJECT_SECRET}-2` },
    });
    let { project, upstream } = await upstreamOf('vault');
    expect(await cp.upstreamCredential(bob, project, upstream)).toEqual({
      ok: true,
      headers: { Authorization: `Bearer ${PROJECT_SECRET}-2` },
      authorizationId: null,
      boundTo: 'https://newer.example/mcp',
    });
    // The same credential with another URL (a re-applied bootstrap file): given again, for the new address.
    await cp.updateUpstream(admin, 'alpha', 'vault', {
      url: 'https://newest.example/mcp',
      auth: { mode: 'project', credential: `${PROJECT_SECRET}-2` },
    });
    ({ project, upstream } = await upstreamOf('vault'));
    expect(await cp.upstreamCredential(bob, project, upstream)).toMatchObject({
      ok: true,
      boundTo: 'https://newest.example/mcp',
    });
    expect((await auditOf('upstream.credentials_dropped'))[0]?.detail).toMatchObject({
      projectCredential: false,
    });
  });

  it('keeps credentials when the address stays: other settings, a fragment, the same URL', async () => {
    const drops = (await auditOf('upstream.credentials_dropped')).length;
    await cp.updateUpstream(alice, 'alpha', 'vault', { enabled: false });
    await cp.updateUpstream(alice, 'alpha', 'vault', { enabled: true });
    await cp.updateUpstream(alice, 'alpha', 'vault', { url: 'https://NEWEST.example:443/mcp#part' });
    await cp.updateUpstream(alice, 'alpha', 'vault', {
      auth: { mode: 'project', header: 'X-Key' },
    });
    expect((await view('vault')).credentialSet).toBe(true);
    expect(await auditOf('upstream.credentials_dropped')).toHaveLength(drops);
    // A query string is part of where requests go.
    await cp.updateUpstream(alice, 'alpha', 'vault', { url: 'https://newest.example/mcp?tenant=2' });
    expect((await view('vault')).credentialSet).toBe(false);
  });

  it("revokes every user's authorization, ends OAuth connections where they were issued, and forgets sessions", async () => {
    await cp.addUpstream(admin, 'alpha', {
      alias: 'gh',
      url: 'https://old-gh.example/mcp',
      auth: { mode: 'per_user', oauth: { clientId: 'configured-client', clientSecret: CLIENT_SECRET } },
    });
    const { upstream } = await upstreamOf('gh');
    const clients = new OAuthClientStore(db, cipher);
    const kept = await clients.saveConfigured(upstream.id, 'https://as.old.example', {
      clientId: 'configured-client',
      clientSecret: CLIENT_SECRET,
    });
    const bobs = await connect(bob as Principal & { kind: 'user' }, 'gh', kept.id);
    const alices = await cp.grantUpstreamAuthorization(alice, 'alpha', 'gh', {
      credential: TOKEN('by-hand'),
    });
    const sessions = new UpstreamSessionStore(db, cipher);
    await sessions.add('gh-scope|plain', {
      nonce: 'n1',
      url: 'https://old-gh.example/mcp',
      upstreamId: upstream.id,
      protocolVersion: '2025-11-25',
      sessionId: 'sess-1',
      initialize: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        serverInfo: { name: 'x', version: '1' },
      },
    });

    await cp.updateUpstream(alice, 'alpha', 'gh', { url: 'https://new-gh.example/mcp' });

    const auths = await cp.listUpstreamAuthorizations(admin, 'alpha');
    expect(auths.find((a) => a.id === bobs.id)).toMatchObject({ status: 'revoked', renewable: false });
    expect(auths.find((a) => a.id === alices.id)).toMatchObject({ status: 'revoked' });
    const after = await upstreamOf('gh');
    expect(await cp.upstreamCredential(bob, after.project, after.upstream)).toMatchObject({ ok: false });
    expect(await cp.authorizationValid(bobs.id)).toBe(false);
    // The client secret was given for the old authorization server.
    expect((await view('gh')).auth).toEqual({
      mode: 'per_user',
      oauth: { clientId: 'configured-client', clientSecretSet: false, registration: 'configured' },
    });
    expect(await cp.upstreamOAuthClient(upstream.id)).toEqual({ clientId: 'configured-client' });
    // The OAuth connection is revoked at the server that issued it, with the client it was issued to.
    expect(revoked).toEqual([
      {
        clientId: kept.id,
        client: expect.objectContaining({
          issuer: 'https://as.old.example',
          clientId: 'configured-client',
          clientSecret: CLIENT_SECRET,
        }),
        accessToken: TOKEN((bob as { userId: string }).userId),
        refreshToken: REFRESH((bob as { userId: string }).userId),
        addressApproved: true,
      },
    ]);
    expect(await clients.byId(kept.id)).toBeUndefined();
    expect(await sessions.get('gh-scope|plain')).toBeUndefined();
    expect((await auditOf('upstream.credentials_dropped'))[0]?.detail).toMatchObject({
      because: 'address_changed',
      oauthClientSecret: true,
      authorizations: 2,
      oauthConnections: 1,
    });
  });

  it('changing the OAuth client ends the connections made with the old one, not hand-granted tokens', async () => {
    const clients = new OAuthClientStore(db, cipher);
    const { upstream } = await upstreamOf('gh');
    const kept = await clients.saveConfigured(upstream.id, 'https://as.new.example', {
      clientId: 'configured-client',
    });
    const bobs = await connect(bob as Principal & { kind: 'user' }, 'gh', kept.id);
    const alices = await cp.grantUpstreamAuthorization(alice, 'alpha', 'gh', {
      credential: TOKEN('by-hand-2'),
    });
    await cp.updateUpstream(alice, 'alpha', 'gh', {
      auth: { mode: 'per_user', oauth: { clientId: 'another-client' } },
    });
    const auths = await cp.listUpstreamAuthorizations(admin, 'alpha');
    expect(auths.find((a) => a.id === bobs.id)?.status).toBe('revoked');
    expect(auths.find((a) => a.id === alices.id)?.status).toBe('active');
    expect(revoked.map((r) => r.client?.issuer)).toEqual(['https://as.new.example']);
    expect((await auditOf('upstream.credentials_dropped'))[0]?.detail).toMatchObject({
      because: 'oauth_client_changed',
      authorizations: 1,
      oauthConnections: 1,
    });
  });

  it('never pairs a credential with another address than the one it was read for', async () => {
    await cp.addUpstream(alice, 'alpha', {
      alias: 'pair',
      url: 'https://a.example/mcp',
      auth: { mode: 'project', credential: `${PROJECT_SECRET}-a` },
    });
    const stale = await upstreamOf('pair');
    await cp.updateUpstream(alice, 'alpha', 'pair', {
      url: 'https://b.example/mcp',
      auth: { mode: 'project', credential: `${PROJECT_SECRET}-b` },
    });
    // A record read before the change (old address) with the credential as it is now (new one): refused.
    await expect(resolveEndpoint(cp, bob, stale.project, stale.upstream)).rejects.toMatchObject({
      kind: 'UpstreamUnavailable',
      message: expect.stringContaining('re-pointed'),
    });
    const fresh = await upstreamOf('pair');
    const endpoint = await resolveEndpoint(cp, bob, fresh.project, fresh.upstream);
    expect(endpoint).toMatchObject({
      url: 'https://b.example/mcp',
      headers: { Authorization: `Bearer ${PROJECT_SECRET}-b` },
      addressApproved: false,
    });
  });

  it('a running task keeps to the address it was created on', async () => {
    const { project } = await upstreamOf('pair');
    const access = {
      project: project.id,
      upstream: 'pair',
      principal: bob,
      authorizationId: null,
      upstreamAddress: 'https://b.example/mcp',
    };
    expect((await resolveTaskEndpoint(cp, access)).url).toBe('https://b.example/mcp');
    await cp.updateUpstream(alice, 'alpha', 'pair', {
      url: 'https://c.example/mcp',
      auth: { mode: 'project', credential: `${PROJECT_SECRET}-c` },
    });
    await expect(resolveTaskEndpoint(cp, access)).rejects.toMatchObject({
      kind: 'UpstreamRefused',
      message: expect.stringContaining('re-pointed to another address after this task started'),
    });
  });

  it("a connection's token is granted only while the upstream keeps the address it was got for", async () => {
    await expect(
      cp.grantUpstreamAuthorization(
        bob,
        'alpha',
        'gh',
        { credential: TOKEN('late') },
        {
          forAddress: 'https://old-gh.example/mcp',
        },
      ),
    ).rejects.toMatchObject({ code: 'conflict' });
    const granted = await cp.grantUpstreamAuthorization(
      bob,
      'alpha',
      'gh',
      { credential: TOKEN('ok') },
      { forAddress: 'https://new-gh.example/mcp' },
    );
    expect(granted.status).toBe('active');
  });
});

describe('who may set an address', () => {
  it("approves an operator's address, checks a manager's, and withdraws the approval when a manager moves it", async () => {
    await cp.addUpstream(admin, 'alpha', { alias: 'ops', url: 'http://internal.test/mcp' });
    expect(checked).toEqual([]);
    expect((await view('ops')).addressApproved).toBe(true);

    await expect(
      cp.addUpstream(alice, 'alpha', { alias: 'sneaky', url: 'http://internal.test/x' }),
    ).rejects.toMatchObject({
      code: 'forbidden',
      message: expect.stringContaining('internal.test'),
    });
    await expect(
      cp.updateUpstream(alice, 'alpha', 'ops', { url: 'http://internal.test/other' }),
    ).rejects.toMatchObject({ code: 'forbidden' });
    const refusals = await auditOf('upstream.address_refused');
    expect(refusals.map((e) => e.detail)).toEqual([{ host: 'internal.test' }, { host: 'internal.test' }]);

    // Other settings of an operator's upstream: not checked, still approved.
    await cp.updateUpstream(alice, 'alpha', 'ops', { enabled: false });
    expect((await view('ops')).addressApproved).toBe(true);
    // A manager re-points it: checked, and no longer approved.
    await cp.updateUpstream(alice, 'alpha', 'ops', { url: 'https://public.example/mcp' });
    expect(checked).toEqual([
      'http://internal.test/x',
      'http://internal.test/other',
      'https://public.example/mcp',
    ]);
    expect((await view('ops')).addressApproved).toBe(false);
    // The instance admin restating the URL approves it again.
    const restated = await cp.updateUpstream(admin, 'alpha', 'ops', { url: 'https://public.example/mcp' });
    expect(restated.changed).toBe(true);
    expect((await view('ops')).addressApproved).toBe(true);
    expect((await auditOf('upstream.updated'))[0]?.detail).toMatchObject({ fields: ['addressApproved'] });
    expect(
      (await cp.updateUpstream(admin, 'alpha', 'ops', { url: 'https://public.example/mcp' })).changed,
    ).toBe(false);
  });
});
