/**
 * Per-upstream OAuth in the control plane, on the database under test: an upstream's `auth.oauth`
 * settings (the configured client's secret sealed, kept or dropped by a patch like a project
 * credential); a connection that renews itself counts as valid for a running task past its access
 * token's expiry; a revoked connection is handed to the RFC 7009 hook with its tokens, after the
 * revocation is written, and a failing hook leaves the revocation standing. The hooks stand in for the
 * authorization server (test/integration/upstream-oauth-connect.test.ts runs them against a real one).
 */
import type { Kysely } from 'kysely';
import { Cipher, generateKey } from '../../src/store/cipher';
import type { RenewAuthorization, RevokeAtServer } from '../../src/store/control-plane';
import { ControlPlaneError, ControlPlaneStore } from '../../src/store/control-plane';
import type { Principal } from '../../src/store/control-plane/types';
import { openDatabase } from '../../src/store/database';
import { OAuthClientStore } from '../../src/store/control-plane/oauth-clients';
import { refreshAad } from '../../src/store/control-plane/renewal';
import type { Database } from '../../src/store/schema';
import { testStoreConfig } from '../helpers/store';

const cipher = new Cipher({ activeKeyId: 'k1', keys: { k1: generateKey() } });
const admin: Principal = { kind: 'admin' };
const SECRET = 'client-secret-MARKER-9c4e1d';

let db: Kysely<Database>;
let cp: ControlPlaneStore;
let clock: Date;
let alice: Principal;
let renew: RenewAuthorization;
const revoked: Array<Parameters<RevokeAtServer>[0]> = [];
let revokeFails = false;

beforeAll(async () => {
  db = await openDatabase(await testStoreConfig());
  clock = new Date('2026-03-01T12:00:00.000Z');
  cp = new ControlPlaneStore(db, cipher, {
    now: () => clock,
    renewAuthorization: (r) => renew(r),
    revokeAtServer: async (r) => {
      revoked.push(r);
      if (revokeFails) throw new Error('authorization server down');
    },
  });
  const user = await cp.createUser(admin, { handle: 'alice', name: 'Alice' });
  alice = { kind: 'user', userId: user.id };
  await cp.createTeam(admin, { slug: 'core', name: 'Core' });
  await cp.addTeamMember(admin, 'core', 'alice');
  await cp.createProject(admin, { slug: 'alpha', team: 'core' });
});
afterAll(async () => {
  await db?.destroy();
});

const authOf = async (alias: string) =>
  (await cp.listUpstreams(admin, 'alpha')).find((u) => u.alias === alias)?.auth;

test('an upstream says it is connected with OAuth; the configured client secret is sealed and never shown', async () => {
  await cp.addUpstream(admin, 'alpha', {
    alias: 'tracker',
    url: 'http://127.0.0.1:9/t',
    auth: { mode: 'per_user', oauth: { clientId: 'gw', clientSecret: SECRET } },
  });
  await cp.addUpstream(admin, 'alpha', {
    alias: 'dcr',
    url: 'http://127.0.0.1:9/d',
    auth: { mode: 'per_user', oauth: {} },
  });
  await cp.addUpstream(admin, 'alpha', {
    alias: 'plain',
    url: 'http://127.0.0.1:9/p',
    auth: { mode: 'per_user' },
  });
  expect(await authOf('tracker')).toEqual({
    mode: 'per_user',
    oauth: { clientId: 'gw', clientSecretSet: true, registration: 'configured' },
  });
  expect(await authOf('dcr')).toEqual({ mode: 'per_user', oauth: { clientSecretSet: false } });
  expect(await authOf('plain')).toEqual({ mode: 'per_user' });
  expect(JSON.stringify(await cp.listUpstreams(admin, 'alpha'))).not.toContain(SECRET);
  const row = await db
    .selectFrom('upstreams')
    .selectAll()
    .where('alias', '=', 'tracker')
    .executeTakeFirstOrThrow();
  expect(Buffer.from(row.oauth_client_secret as Uint8Array).includes(SECRET)).toBe(false);
  expect(await cp.upstreamOAuthClient(row.id)).toEqual({ clientId: 'gw', clientSecret: SECRET });

  await expect(
    cp.addUpstream(admin, 'alpha', {
      alias: 'bad',
      url: 'http://127.0.0.1:9/b',
      auth: { mode: 'per_user', oauth: { clientSecret: SECRET } },
    }),
  ).rejects.toThrow(ControlPlaneError);
});

test('a patch keeps the secret while the client id stays, drops it with another id, and turns OAuth off', async () => {
  const id = (
    await db.selectFrom('upstreams').select('id').where('alias', '=', 'tracker').executeTakeFirstOrThrow()
  ).id;
  const same = await cp.updateUpstream(admin, 'alpha', 'tracker', {
    auth: { mode: 'per_user', oauth: { clientId: 'gw', clientSecret: SECRET } },
  });
  expect(same.changed).toBe(false);
  await cp.updateUpstream(admin, 'alpha', 'tracker', {
    auth: { mode: 'per_user', oauth: { clientId: 'gw' } },
  });
  expect(await cp.upstreamOAuthClient(id)).toEqual({ clientId: 'gw', clientSecret: SECRET });
  await cp.updateUpstream(admin, 'alpha', 'tracker', {
    auth: { mode: 'per_user', oauth: { clientId: 'gw2' } },
  });
  expect(await cp.upstreamOAuthClient(id)).toEqual({ clientId: 'gw2' });
  expect(await authOf('tracker')).toEqual({
    mode: 'per_user',
    oauth: { clientId: 'gw2', clientSecretSet: false, registration: 'configured' },
  });
  await cp.updateUpstream(admin, 'alpha', 'tracker', { auth: { mode: 'per_user' } });
  expect(await authOf('tracker')).toEqual({ mode: 'per_user' });
  expect(await cp.upstreamOAuthClient(id)).toBeUndefined();
});

/** A connection for alice to `dcr` as connecting leaves it: access token for 5 minutes, refresh token. */
async function connect(access: string, refresh: string): Promise<string> {
  const granted = await cp.grantUpstreamAuthorization(alice, 'alpha', 'dcr', {
    credential: access,
    expiresAt: new Date(clock.getTime() + 300_000).toISOString(),
  });
  await cp.attachRenewal(granted.id, {
    refreshToken: refresh,
    clientId: 'ocl_x',
    resource: 'http://127.0.0.1:9/d',
  });
  return granted.id;
}

test("a task's connection past its access token's expiry is valid while it renews, and not once renewal is refused", async () => {
  const id = await connect('access-1', 'refresh-1');
  const asked: string[] = [];
  renew = async (r) => {
    asked.push(r.refreshToken);
    return { accessToken: 'access-2', refreshToken: 'refresh-2', expiresAt: clock.getTime() + 300_000 };
  };
  expect(await cp.authorizationValid(id)).toBe(true);
  expect(asked).toEqual([]); // not due yet
  clock = new Date(clock.getTime() + 301_000); // the access token has expired
  expect(await cp.authorizationValid(id)).toBe(true);
  expect(asked).toEqual(['refresh-1']);

  renew = async (r) => {
    asked.push(r.refreshToken);
    return 'rejected';
  };
  clock = new Date(clock.getTime() + 301_000);
  expect(await cp.authorizationValid(id)).toBe(false);
  expect(asked).toEqual(['refresh-1', 'refresh-2']);
});

test('revoking a connection hands its tokens to the RFC 7009 hook after writing it; a failing hook changes nothing', async () => {
  await connect('access-3', 'refresh-3');
  const view = await cp.revokeUpstreamAuthorization(alice, 'alpha', 'dcr');
  expect(view.status).toBe('revoked');
  expect(revoked.at(-1)).toEqual({
    clientId: 'ocl_x',
    accessToken: 'access-3',
    refreshToken: 'refresh-3',
    // The instance admin set the upstream's address: its authorization server is reached without the policy.
    addressApproved: true,
  });
  const row = await db
    .selectFrom('upstream_authorizations')
    .selectAll()
    .where('id', '=', view.id)
    .executeTakeFirstOrThrow();
  expect(row.refresh_token).toBeNull();

  const id = await connect('access-4', 'refresh-4');
  revokeFails = true;
  expect((await cp.revokeUpstreamAuthorization(alice, 'alpha', 'dcr')).status).toBe('revoked');
  expect(revoked.at(-1)?.accessToken).toBe('access-4');
  expect(await cp.authorizationValid(id)).toBe(false);

  // A token granted by hand (no OAuth client) is not sent anywhere.
  const count = revoked.length;
  await cp.grantUpstreamAuthorization(alice, 'alpha', 'plain', { credential: 'by-hand' });
  await cp.revokeUpstreamAuthorization(alice, 'alpha', 'plain');
  expect(revoked.length).toBe(count);
});

test('a connection whose access token expired but which can renew is still revoked, at the server too', async () => {
  const id = await connect('access-5', 'refresh-5');
  revokeFails = false;
  clock = new Date(clock.getTime() + 301_000); // expired; the dashboard shows it connected (renewable)
  const view = await cp.revokeUpstreamAuthorization(alice, 'alpha', 'dcr');
  expect(view.status).toBe('revoked');
  expect(revoked.at(-1)).toMatchObject({ accessToken: 'access-5', refreshToken: 'refresh-5' });
  expect(await cp.authorizationValid(id)).toBe(false);
  // Nothing left to revoke: expired without a refresh token, or already revoked.
  await expect(cp.revokeUpstreamAuthorization(alice, 'alpha', 'dcr')).rejects.toThrow(ControlPlaneError);
});

test('removing an upstream removes the copy of its configured client', async () => {
  const view = await cp.addUpstream(admin, 'alpha', {
    alias: 'gone',
    url: 'http://127.0.0.1:9/g',
    auth: { mode: 'per_user', oauth: { clientId: 'gw', clientSecret: SECRET } },
  });
  const clients = new OAuthClientStore(db, cipher);
  const kept = await clients.saveConfigured(view.id, 'http://127.0.0.1:9/as', {
    clientId: 'gw',
    clientSecret: SECRET,
  });
  expect(await clients.byId(kept.id)).toMatchObject({ clientId: 'gw', clientSecret: SECRET });
  const raw = await db
    .selectFrom('upstream_oauth_clients')
    .selectAll()
    .where('id', '=', kept.id)
    .executeTakeFirstOrThrow();
  expect(Buffer.from(raw.client_secret as Uint8Array).includes(SECRET)).toBe(false);
  await cp.removeUpstream(admin, 'alpha', 'gone');
  expect(await clients.byId(kept.id)).toBeUndefined();
});

test('two replicas renewing one connection at once present its refresh token once, and both end valid', async () => {
  const id = await connect('access-7', 'refresh-7');
  // A second replica: its own store context on the same database (its own in-process renewal).
  const other = new ControlPlaneStore(db, cipher, { now: () => clock, renewAuthorization: (r) => renew(r) });
  // The authorization server rotates refresh tokens and, as OAuth 2.1 allows, ends the whole grant when
  // a refresh token is presented a second time. Its token requests take a while, so a second replica
  // that presented the same token would arrive while the first is answered.
  const server = strictServer('refresh-7', 300);
  renew = server.renew;
  clock = new Date(clock.getTime() + 301_000); // expired: both renew
  expect(await Promise.all([cp.authorizationValid(id), other.authorizationValid(id)])).toEqual([true, true]);
  expect(server.presented).toEqual(['refresh-7']);
  expect(await storedRefresh(id)).toBe(server.current());
  // The grant lives on: the next renewal, on either replica, is answered.
  clock = new Date(clock.getTime() + 301_000);
  expect(await other.authorizationValid(id)).toBe(true);
  expect(server.presented).toEqual(['refresh-7', 'refresh-7-1']);
  expect(server.ended()).toBe(false);
});

test('a renewal lease left by a replica that died is taken over once it runs out', async () => {
  const id = await connect('access-8', 'refresh-8');
  const server = strictServer('refresh-8', 0);
  renew = server.renew;
  clock = new Date(clock.getTime() + 301_000);
  // A replica took the lease and died: it runs out 1 s from now (on the store's clock).
  await db
    .updateTable('upstream_authorizations')
    .set({ renewing_until: new Date(clock.getTime() + 1_000).toISOString() })
    .where('id', '=', id)
    .execute();
  const valid = cp.authorizationValid(id);
  // The lease holds: nothing is presented while it does.
  await new Promise((r) => setTimeout(r, 300));
  expect(server.presented).toEqual([]);
  clock = new Date(clock.getTime() + 1_001);
  expect(await valid).toBe(true);
  expect(server.presented).toEqual(['refresh-8']);
  expect(await storedRefresh(id)).toBe(server.current());
});

/**
 * An authorization server that rotates refresh tokens, answers each token request after `delayMs`, and
 * ends the grant when a refresh token is presented that is no longer current (a reuse).
 */
function strictServer(first: string, delayMs: number) {
  let current = first;
  let ended = false;
  const presented: string[] = [];
  const renew: RenewAuthorization = async (r) => {
    presented.push(r.refreshToken);
    await new Promise((res) => setTimeout(res, delayMs));
    if (ended || r.refreshToken !== current) {
      ended = true;
      return 'rejected';
    }
    current = `${first}-${presented.length}`;
    return { accessToken: `access-${current}`, refreshToken: current, expiresAt: clock.getTime() + 300_000 };
  };
  return { renew, presented, current: () => current, ended: () => ended };
}

/** The refresh token stored for authorization `id`, opened (undefined when there is none). */
async function storedRefresh(id: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('upstream_authorizations')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  if (!row.refresh_token) return undefined;
  return cipher.open(row.refresh_token, refreshAad(row)).toString('utf8');
}
