/**
 * The schema the migrations give a fresh database, pinned per database (test/store/fixtures/schema-sqlite.json
 * and schema-postgres.json): columns, indexes, foreign keys and constraints as the catalog reports them
 * (test/store/schema-dump.ts), the migration names in the order they run, and the rows they seed.
 *
 * A new migration changes the schema on purpose: regenerate both fixtures and review their diff,
 *   UPDATE_SCHEMA_SNAPSHOT=1 nice -n 10 npx jest test/store/schema-snapshot.test.ts
 *   npx prettier --write test/store/fixtures/schema-*.json
 * Rewriting an existing migration must leave both fixtures as they are.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { openDatabase } from '../../src/store/database';
import { migrationProvider } from '../../src/store/migrations';
import { testDatabase, testStoreConfig } from '../helpers/store';
import { dumpSchema, type SchemaDump } from './schema-dump';

const DB = testDatabase();
const FIXTURE = path.join(__dirname, 'fixtures', `schema-${DB}.json`);
const UPDATE = process.env['UPDATE_SCHEMA_SNAPSHOT'] === '1';

describe(`schema snapshot on ${DB}`, () => {
  let dump: SchemaDump;

  beforeAll(async () => {
    const db = await openDatabase(await testStoreConfig());
    try {
      dump = await dumpSchema(db as Kysely<unknown>);
    } finally {
      await db.destroy();
    }
    if (UPDATE) {
      mkdirSync(path.dirname(FIXTURE), { recursive: true });
      writeFileSync(FIXTURE, `${JSON.stringify(dump, null, 2)}\n`);
    }
  });

  const expected = (): SchemaDump => JSON.parse(readFileSync(FIXTURE, 'utf8')) as SchemaDump;

  it('registers the migrations under the same names, in the same order', async () => {
    expect(Object.keys(await migrationProvider.getMigrations())).toEqual(expected().migrations);
    expect(dump.migrations).toEqual(expected().migrations);
  });

  it('gives a fresh database the pinned tables, columns, indexes, keys and constraints', () => {
    expect(Object.keys(dump.tables)).toEqual(Object.keys(expected().tables));
    for (const [table, shape] of Object.entries(expected().tables)) {
      expect({ table, ...dump.tables[table] }).toEqual({ table, ...shape });
    }
    expect(dump.others).toEqual(expected().others);
  });

  it('seeds the pinned rows', () => {
    expect(dump.rows).toEqual(expected().rows);
  });
});
