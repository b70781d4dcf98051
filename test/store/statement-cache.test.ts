import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { withStatementCache } from '../../src/store/statement-cache';

describe('withStatementCache', () => {
  let sqlite: SQLite.Database;
  beforeEach(() => {
    sqlite = new SQLite(':memory:');
  });
  afterEach(() => {
    if (sqlite.open) sqlite.close();
  });

  it('prepares a statement once and hands the same one back for the same SQL', () => {
    const db = withStatementCache(sqlite);
    const a = db.prepare('select 1 as one');
    expect(db.prepare('select 1 as one')).toBe(a);
    expect(db.prepare('select 2 as two')).not.toBe(a);
  });

  it('forgets the least recently used statement past its bound', () => {
    const db = withStatementCache(sqlite, 2);
    const one = db.prepare('select 1');
    const two = db.prepare('select 2');
    expect(db.prepare('select 1')).toBe(one); // now the most recent
    db.prepare('select 3'); // evicts `select 2`
    expect(db.prepare('select 1')).toBe(one);
    expect(db.prepare('select 2')).not.toBe(two);
  });

  it('gives Kysely correct results when statements are reused across queries and transactions', async () => {
    interface Db {
      items: { id: number; name: string };
    }
    const db = new Kysely<Db>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
    await db.schema
      .createTable('items')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('name', 'text')
      .execute();
    for (let i = 1; i <= 3; i++)
      await db
        .insertInto('items')
        .values({ id: i, name: `n${i}` })
        .execute();
    await db.transaction().execute(async (tx) => {
      await tx.updateTable('items').set({ name: 'changed' }).where('id', '=', 2).execute();
    });
    await expect(
      db.transaction().execute(async (tx) => {
        await tx.updateTable('items').set({ name: 'lost' }).where('id', '=', 3).execute();
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    const byId = (id: number) =>
      db.selectFrom('items').select('name').where('id', '=', id).executeTakeFirst();
    expect(await byId(1)).toEqual({ name: 'n1' });
    expect(await byId(2)).toEqual({ name: 'changed' });
    expect(await byId(3)).toEqual({ name: 'n3' });
    await db.destroy();
    expect(sqlite.open).toBe(false);
  });
});
