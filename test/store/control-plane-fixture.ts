/**
 * The control-plane store tests' fixture (control-plane*.test.ts): a ControlPlaneStore on the database
 * under test (the `sqlite` and `postgres` jest projects) with a clock the tests move, team `core` (alice)
 * owning project `alpha` with bob as a direct member, and carol in team `other` owning `beta`.
 */
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { Cipher, generateKey } from '../../src/store/cipher';
import { ControlPlaneStore } from '../../src/store/control-plane';
import type { Principal, ProjectRecord } from '../../src/store/control-plane/types';
import { openDatabase } from '../../src/store/database';
import type { Database } from '../../src/store/schema';
import { testStoreConfig, type TestStoreConfig } from '../helpers/store';

export const k1 = generateKey();
export const cipher = new Cipher({ activeKeyId: 'k1', keys: { k1 } });
export const admin: Principal = { kind: 'admin' };
export const anonymous: Principal = { kind: 'anonymous' };
export const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

export let config: TestStoreConfig;
export let db: Kysely<Database>;
export let clock: Date;
export let cp: ControlPlaneStore;
export const deleted: ProjectRecord[] = [];

// Fixture: team `core` (alice) owns project `alpha`; bob is a direct member of alpha; carol is in team
// `other`, which owns project `beta`.
export let alice: Principal;
export let bob: Principal;
export let carol: Principal;
export let alpha: ProjectRecord;

/**
 * Opens the database under test before the tests of the calling file, creates the users, teams and
 * projects of the fixture above, and closes the database after them.
 */
export function useControlPlane(): void {
  beforeAll(async () => {
    config = await testStoreConfig();
    db = await openDatabase(config);
    clock = new Date('2026-03-01T12:00:00.000Z');
    cp = new ControlPlaneStore(db, cipher, {
      now: () => clock,
      onProjectDeleted: async (p) => void deleted.push(p),
    });
    const [a, b, c] = await Promise.all(
      ['alice', 'bob', 'carol'].map((handle) => cp.createUser(admin, { handle, name: handle.toUpperCase() })),
    );
    alice = { kind: 'user', userId: a!.id };
    bob = { kind: 'user', userId: b!.id };
    carol = { kind: 'user', userId: c!.id };
    await cp.createTeam(admin, { slug: 'core', name: 'Core' });
    await cp.createTeam(admin, { slug: 'other', name: 'Other' });
    await cp.addTeamMember(admin, 'core', 'alice');
    await cp.addTeamMember(admin, 'other', 'carol');
    await cp.createProject(admin, { slug: 'alpha', team: 'core' });
    await cp.createProject(admin, { slug: 'beta', team: 'other' });
    await cp.addProjectMember(alice, 'alpha', 'bob');
    alpha = (await cp.projectBySlug('alpha'))!;
  });

  afterAll(async () => {
    await db?.destroy();
  });
}

/** Moves the store's clock (a test that moves it puts it back). */
export function setClock(to: Date): void {
  clock = to;
}

/** Reads project `alpha` again, after a change to it. */
export async function reloadAlpha(): Promise<void> {
  alpha = (await cp.projectBySlug('alpha'))!;
}

/** Expects `p` to be refused with the ControlPlaneError code `code`. */
export async function expectCode(p: Promise<unknown>, code: string): Promise<void> {
  await expect(p).rejects.toMatchObject({ name: 'ControlPlaneError', code });
}
