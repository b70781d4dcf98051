/**
 * The serving cache's bound (src/store/control-plane/serving-cache.ts): each space keeps at most its
 * `maxPerSpace` entries, the oldest going first, so keys that come from requests (an unknown bearer
 * token is cached as unknown) cannot grow it between two control-plane changes. On the database under
 * test, migrated (the cache reads its generation row).
 */
import type { Kysely } from 'kysely';
import { ServingCache } from '../../src/store/control-plane/serving-cache';
import { openDatabase } from '../../src/store/database';
import type { Database } from '../../src/store/schema';
import { testStoreConfig } from '../helpers/store';

let db: Kysely<Database>;
beforeAll(async () => {
  db = await openDatabase(await testStoreConfig());
});
afterAll(async () => {
  await db?.destroy();
});

test('a space keeps at most its bound, the oldest entries going first', async () => {
  const cache = new ServingCache(db, () => new Date().toISOString(), 60_000, 3);
  const loads: string[] = [];
  const get = (space: string, key: string) =>
    cache.get(space, key, () => {
      loads.push(`${space}/${key}`);
      return Promise.resolve({ value: undefined }); // as for an unknown token
    });
  for (const key of ['a', 'b', 'c', 'd', 'e']) await get('token', key);
  await get('project', 'x');
  loads.length = 0;
  // c, d and e are still cached; a and b went to make room; the other space kept its own.
  for (const key of ['c', 'd', 'e']) await get('token', key);
  await get('project', 'x');
  expect(loads).toEqual([]);
  await get('token', 'a');
  expect(loads).toEqual(['token/a']);
});
