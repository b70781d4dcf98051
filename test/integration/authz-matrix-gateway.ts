/**
 * The world of the authorization matrix (authz-matrix.test.ts, authz-matrix-revoked.test.ts): the callers
 * the control plane knows (users, API keys, anonymous, outsiders, the admin token), the task methods of
 * both eras, and the gateway they are declared in, with its admin API.
 */
import { randomUUID } from 'node:crypto';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { adminCall } from '../helpers/admin-api';

const ADMIN = `admin-${randomUUID()}`;
const tok = (name: string) => `trp_${name}-matrix-${'0'.repeat(30)}`.slice(0, 44);
const key = (name: string) => `trk_${name}-matrix-${'0'.repeat(30)}`.slice(0, 44);
export const TOKENS = {
  alice: tok('alice'),
  tess: tok('tess'),
  bob: tok('bob'),
  carol: tok('carol'),
  dave: tok('dave'),
  erin: tok('erin'),
  frank: tok('frank'),
};
const KEYS = {
  one: key('one'),
  two: key('two'),
  three: key('three'),
  sibling: key('sibling'),
  elsewhere: key('elsewhere'),
};

/** A caller: a project's endpoint and a credential (none for anonymous and outsider cases). */
export interface Subject {
  name: string;
  project: string;
  token?: string;
  /** What every request of this subject gets when it may not call `project` at all. */
  refused?: { status: number; code: number };
}

export const S = {
  alice: { name: 'alice (team member)', project: 'secure', token: TOKENS.alice },
  tess: { name: 'tess (team member)', project: 'secure', token: TOKENS.tess },
  bob: { name: 'bob (direct member)', project: 'secure', token: TOKENS.bob },
  key1: { name: 'API key one', project: 'secure', token: KEYS.one },
  key2: { name: 'API key two', project: 'secure', token: KEYS.two },
  aliceSibling: { name: 'alice through another project', project: 'sibling', token: TOKENS.alice },
  keySibling: { name: "another project's API key", project: 'sibling', token: KEYS.sibling },
  carol: { name: "another team's user", project: 'elsewhere', token: TOKENS.carol },
  keyElsewhere: { name: "another team's API key", project: 'elsewhere', token: KEYS.elsewhere },
  anonymous: { name: 'anonymous caller', project: 'open' },
  dave: { name: 'dave (per-user authorization)', project: 'peruser', token: TOKENS.dave },
  alicePerUser: { name: 'alice (her own authorization)', project: 'peruser', token: TOKENS.alice },
  carolOutside: {
    name: "another team's user on this project",
    project: 'secure',
    token: TOKENS.carol,
    refused: { status: 404, code: -31004 },
  },
  keyOutside: {
    name: 'an API key on a project not its own',
    project: 'elsewhere',
    token: KEYS.one,
    refused: { status: 404, code: -31004 },
  },
  // The instance administrator manages projects; the admin token is no caller of any endpoint.
  adminToken: {
    name: 'the admin token',
    project: 'secure',
    token: ADMIN,
    refused: { status: 401, code: -31007 },
  },
  noToken: { name: 'no token', project: 'secure', refused: { status: 401, code: -31007 } },
  badToken: {
    name: 'a token that never existed',
    project: 'secure',
    token: tok('nobody'),
    refused: { status: 401, code: -31007 },
  },
} satisfies Record<string, Subject>;

/** Owners of the tasks the access-removing states take away. */
export const LATE = {
  key3: { name: 'API key three (revoked)', project: 'secure', token: KEYS.three },
  frank: { name: 'frank (token revoked)', project: 'secure', token: TOKENS.frank },
  erin: { name: 'erin (direct member, removed)', project: 'secure', token: TOKENS.erin },
  daveWithdrawn: { name: 'dave (authorization withdrawn)', project: 'peruser', token: TOKENS.dave },
} satisfies Record<string, Subject>;

export type Method =
  | '2026 tasks/get'
  | '2026 tasks/update'
  | '2026 tasks/cancel'
  | '2026 subscriptions/listen'
  | '2025 tasks/get'
  | '2025 tasks/result'
  | '2025 tasks/list'
  | '2025 tasks/cancel';
/** Cancelling and waiting for the result come last for the owner (they end the task). */
export const METHODS: Method[] = [
  '2026 tasks/get',
  '2026 tasks/update',
  '2026 subscriptions/listen',
  '2025 tasks/get',
  '2025 tasks/list',
  '2026 tasks/cancel',
  '2025 tasks/cancel',
  '2025 tasks/result',
];

/** The gateway of the calling test file (set by useMatrixGateway()'s beforeAll). */
export let gw: TestGateway;

/**
 * Starts the gateway with the matrix's users, teams, projects, keys and per-user authorizations before the
 * tests of the calling file, and closes it after them; `gw` is that gateway.
 */
export function useMatrixGateway(): void {
  beforeAll(async () => {
    gw = await startTestGateway({
      config: { admin: { token: ADMIN } },
      projects: () => [],
      bootstrap: (url) => {
        const upstream = { alias: 'example', url };
        return {
          users: Object.entries(TOKENS).map(([handle, token]) => ({
            handle,
            tokens: [{ name: 't', token }],
          })),
          teams: [
            { slug: 'core', members: ['alice', 'tess', 'dave', 'frank'] },
            { slug: 'other', members: ['carol'] },
          ],
          projects: [
            {
              slug: 'secure',
              team: 'core',
              namespacing: false,
              members: ['bob', 'erin'],
              apiKeys: [
                { name: 'one', key: KEYS.one },
                { name: 'two', key: KEYS.two },
                { name: 'three', key: KEYS.three },
              ],
              upstreams: [upstream],
            },
            {
              slug: 'sibling',
              team: 'core',
              namespacing: false,
              apiKeys: [{ name: 's', key: KEYS.sibling }],
              upstreams: [upstream],
            },
            {
              slug: 'elsewhere',
              team: 'other',
              namespacing: false,
              apiKeys: [{ name: 'e', key: KEYS.elsewhere }],
              upstreams: [upstream],
            },
            { slug: 'open', team: 'other', authMode: 'anonymous', namespacing: false, upstreams: [upstream] },
            {
              slug: 'peruser',
              team: 'core',
              namespacing: false,
              upstreams: [{ ...upstream, auth: { mode: 'per_user' } }],
            },
          ],
        };
      },
    });
    for (const who of [TOKENS.dave, TOKENS.alice]) {
      const grant = await admin(
        'PUT',
        '/projects/peruser/upstreams/example/authorization',
        { credential: `secret-${randomUUID()}` },
        who,
      );
      expect(grant.status).toBe(200);
    }
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
  });
}

/** A call of the gateway's admin API, with the admin token unless another is given. */
export async function admin(method: string, route: string, body?: unknown, token = ADMIN) {
  const reply = await adminCall(gw.client.url, token, method, route, body);
  return { status: reply.status, body: reply.body as Record<string, unknown> };
}
