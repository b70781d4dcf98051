/**
 * The schema the migrations give a fresh database, pinned per database (test/store/fixtures/schema-sqlite.txt
 * and schema-postgres.txt): columns, indexes, foreign keys and constraints as the catalog reports them
 * (test/store/schema-dump.ts), the migration names in the order they run, and the rows they seed. The
 * fixture has a line per column, index, key and constraint, so a schema change reads as a small diff.
 *
 * A new migration changes the schema on purpose: regenerate both fixtures and review their diff,
 *   UPDATE_SCHEMA_SNAPSHOT=1 nice -n 10 npx jest test/store/schema-snapshot.test.ts
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
const FIXTURE = path.join(__dirname, 'fixtures', `schema-${DB}.txt`);
const UPDATE = process.env['UPDATE_SCHEMA_SNAPSHOT'] === '1';

/** The fixture's blocks: `migrations`, `table <name>` with a line per entry, `others`, `rows`. */
function render(dump: SchemaDump): Map<string, string[]> {
  const blocks = new Map<string, string[]>([['migrations', dump.migrations]]);
  for (const [table, shape] of Object.entries(dump.tables)) {
    const lines: string[] = [];
    for (const [kind, value] of Object.entries(shape)) {
      const entries: unknown[] = Array.isArray(value) ? value : [value];
      for (const entry of entries) lines.push(`${kind} ${JSON.stringify(entry)}`);
    }
    blocks.set(`table ${table}`, lines);
  }
  blocks.set('others', dump.others);
  blocks.set(
    'rows',
    Object.entries(dump.rows).map(([table, rows]) => `${table} ${JSON.stringify(rows)}`),
  );
  return blocks;
}

function toText(blocks: Map<string, string[]>): string {
  return (
    [...blocks].map(([head, lines]) => [head, ...lines.map((l) => `  ${l}`)].join('\n')).join('\n') + '\n'
  );
}

function fromText(text: string): Map<string, string[]> {
  const blocks = new Map<string, string[]>();
  let current: string[] = [];
  for (const line of text.split('\n').filter((l) => l !== '')) {
    if (line.startsWith('  ')) current.push(line.slice(2));
    else blocks.set(line, (current = []));
  }
  return blocks;
}

describe(`schema snapshot on ${DB}`, () => {
  let actual: Map<string, string[]>;

  beforeAll(async () => {
    const db = await openDatabase(await testStoreConfig());
    try {
      actual = render(await dumpSchema(db as Kysely<unknown>));
    } finally {
      await db.destroy();
    }
    if (UPDATE) {
      mkdirSync(path.dirname(FIXTURE), { recursive: true });
      writeFileSync(FIXTURE, toText(actual));
    }
  });

  const expected = (): Map<string, string[]> => fromText(readFileSync(FIXTURE, 'utf8'));

  it('registers the migrations under the same names, in the same order', async () => {
    expect(Object.keys(await migrationProvider.getMigrations())).toEqual(expected().get('migrations'));
    expect(actual.get('migrations')).toEqual(expected().get('migrations'));
  });

  it('gives a fresh database the pinned tables, columns, indexes, keys and constraints', () => {
    expect([...actual.keys()]).toEqual([...expected().keys()]);
    for (const [head, lines] of expected()) {
      if (!head.startsWith('table ')) continue;
      expect({ head, lines: actual.get(head) }).toEqual({ head, lines });
    }
    expect(actual.get('others')).toEqual(expected().get('others'));
  });

  it('seeds the pinned rows', () => {
    expect(actual.get('rows')).toEqual(expected().get('rows'));
  });
});
