/**
 * What the migrations made of a database, as plain data to compare with a fixture (schema-snapshot.test.ts):
 * per table its columns in their order, its indexes, foreign keys and constraints, each normalized and
 * sorted, read from the catalog (SQLite pragmas, PostgreSQL's pg_catalog) rather than from the DDL text,
 * whose formatting is not part of the schema. Also the applied migration names and any rows the
 * migrations wrote.
 */
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { dialectOf } from '../../src/store/dialect';

export interface ColumnDump {
  name: string;
  type: string;
  notNull: boolean;
  default: string | null;
  /** Position in the primary key, 1-based; 0 when not part of it. */
  pk: number;
  /** PostgreSQL `generated … as identity` ('always' | 'by default'); SQLite: never set. */
  identity?: string;
}

export interface IndexDump {
  name: string;
  unique: boolean;
  columns: string[];
  /** The WHERE of a partial index. */
  where: string | null;
  /** SQLite: `c` created by CREATE INDEX, `u` by a UNIQUE constraint, `pk` by the primary key. */
  origin?: string;
  /** PostgreSQL: the index as PostgreSQL prints it back. */
  definition?: string;
}

export interface ForeignKeyDump {
  columns: string[];
  table: string;
  references: string[];
  onDelete: string;
  onUpdate: string;
}

/** PostgreSQL: every named constraint (`p` primary key, `u` unique, `f` foreign key, `c` check). */
export interface ConstraintDump {
  name: string;
  kind: string;
  definition: string;
}

export interface TableDump {
  columns: ColumnDump[];
  indexes: IndexDump[];
  foreignKeys: ForeignKeyDump[];
  constraints?: ConstraintDump[];
  /** SQLite: declared AUTOINCREMENT (the only catalog trace is the table's DDL and `sqlite_sequence`). */
  autoincrement?: boolean;
}

export interface SchemaDump {
  /** kysely_migration, in the order applied (by name, as the migrator runs them). */
  migrations: string[];
  tables: Record<string, TableDump>;
  /** Views and triggers, `kind:name`. */
  others: string[];
  /** The rows of every table that is not empty. */
  rows: Record<string, unknown[]>;
}

/** Kysely's own bookkeeping, and SQLite's, are not the gateway's schema. */
const SQLITE_OWN = `name not like 'sqlite\\_%' escape '\\' and name not like 'kysely\\_%' escape '\\'`;
const PG_OWN = `not like 'kysely\\_%'`;

export async function dumpSchema(db: Kysely<unknown>): Promise<SchemaDump> {
  const migrations = await rows<{ name: string }>(db, 'select name from kysely_migration order by name');
  const tables = dialectOf(db) === 'postgres' ? await postgresTables(db) : await sqliteTables(db);
  const others =
    dialectOf(db) === 'postgres'
      ? await rows<{ o: string }>(
          db,
          `select 'view:' || table_name as o from information_schema.views where table_schema = 'public'
           union all
           select distinct 'trigger:' || trigger_name from information_schema.triggers
           where trigger_schema = 'public' order by 1`,
        )
      : await rows<{ o: string }>(
          db,
          `select type || ':' || name as o from sqlite_master where type in ('view', 'trigger') order by 1`,
        );
  const contents: Record<string, unknown[]> = {};
  for (const table of Object.keys(tables)) {
    const found = await rows<Record<string, unknown>>(db, `select * from ${table} order by 1`);
    if (found.length > 0) contents[table] = found;
  }
  return {
    migrations: migrations.map((m) => m.name),
    tables,
    others: others.map((o) => o.o),
    rows: contents,
  };
}

async function rows<R>(db: Kysely<unknown>, text: string): Promise<R[]> {
  return (await sql<R>`${sql.raw(text)}`.execute(db)).rows;
}

function byName<T extends { name: string }>(list: T[]): T[] {
  return [...list].sort((a, b) => a.name.localeCompare(b.name));
}

async function sqliteTables(db: Kysely<unknown>): Promise<Record<string, TableDump>> {
  const tables = await rows<{ name: string; sql: string }>(
    db,
    `select name, sql from sqlite_master where type = 'table' and ${SQLITE_OWN} order by name`,
  );
  const out: Record<string, TableDump> = {};
  for (const table of tables) {
    // CHECK constraints have no pragma: refuse them rather than leave them out of the snapshot unseen.
    if (/\bcheck\s*\(/i.test(table.sql))
      throw new Error(`${table.name}: CHECK constraints are not dumped yet`);
    const columns = await rows<{
      name: string;
      type: string;
      notnull: number;
      dflt_value: string | null;
      pk: number;
    }>(db, `pragma table_info(${table.name})`);
    const indexList = await rows<{ name: string; unique: number; origin: string; partial: number }>(
      db,
      `pragma index_list(${table.name})`,
    );
    const indexes: IndexDump[] = [];
    for (const index of indexList) {
      const keyColumns = await rows<{ seqno: number; name: string }>(db, `pragma index_info(${index.name})`);
      const where =
        index.partial === 1
          ? (
              await rows<{ sql: string }>(db, `select sql from sqlite_master where name = '${index.name}'`)
            )[0]!.sql
              .replace(/^[\s\S]*?\bwhere\b/i, '')
              .replace(/\s+/g, ' ')
              .trim()
          : null;
      indexes.push({
        name: index.name,
        unique: index.unique === 1,
        columns: keyColumns.sort((a, b) => a.seqno - b.seqno).map((c) => c.name),
        where,
        origin: index.origin,
      });
    }
    const fkRows = await rows<{
      id: number;
      seq: number;
      table: string;
      from: string;
      to: string | null;
      on_update: string;
      on_delete: string;
    }>(db, `pragma foreign_key_list(${table.name})`);
    const foreignKeys = new Map<number, ForeignKeyDump>();
    for (const fk of fkRows.sort((a, b) => a.id - b.id || a.seq - b.seq)) {
      const entry = foreignKeys.get(fk.id) ?? {
        columns: [],
        table: fk.table,
        references: [],
        onDelete: fk.on_delete,
        onUpdate: fk.on_update,
      };
      entry.columns.push(fk.from);
      entry.references.push(fk.to ?? '(primary key)');
      foreignKeys.set(fk.id, entry);
    }
    out[table.name] = {
      columns: columns.map((c) => ({
        name: c.name,
        type: c.type,
        notNull: c.notnull === 1,
        default: c.dflt_value,
        pk: c.pk,
      })),
      indexes: byName(indexes),
      foreignKeys: sortForeignKeys([...foreignKeys.values()]),
      autoincrement: /\bautoincrement\b/i.test(table.sql),
    };
  }
  return out;
}

function sortForeignKeys(list: ForeignKeyDump[]): ForeignKeyDump[] {
  const key = (fk: ForeignKeyDump): string => `${fk.columns.join(',')}>${fk.table}`;
  return list.sort((a, b) => key(a).localeCompare(key(b)));
}

async function postgresTables(db: Kysely<unknown>): Promise<Record<string, TableDump>> {
  const tables = await rows<{ name: string }>(
    db,
    `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = 'public' and c.relkind = 'r' and c.relname ${PG_OWN} order by c.relname`,
  );
  const out: Record<string, TableDump> = {};
  for (const { name } of tables) {
    const table = `'public.${name}'::regclass`;
    const columns = await rows<{
      name: string;
      type: string;
      not_null: boolean;
      default: string | null;
      pk: number;
      identity: string;
    }>(
      db,
      `select a.attname as name, format_type(a.atttypid, a.atttypmod) as type, a.attnotnull as not_null,
         pg_get_expr(d.adbin, d.adrelid) as default,
         coalesce((select array_position(p.conkey, a.attnum) from pg_constraint p
                   where p.conrelid = a.attrelid and p.contype = 'p'), 0)::int as pk,
         a.attidentity as identity
       from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
       where a.attrelid = ${table} and a.attnum > 0 and not a.attisdropped order by a.attnum`,
    );
    const indexes = await rows<{
      name: string;
      unique: boolean;
      columns: string[];
      where: string | null;
      definition: string;
    }>(
      db,
      `select i.relname as name, x.indisunique as unique,
         array(select a.attname::text from unnest(x.indkey) with ordinality k(attnum, n)
               join pg_attribute a on a.attrelid = x.indrelid and a.attnum = k.attnum order by k.n) as columns,
         pg_get_expr(x.indpred, x.indrelid) as where, pg_get_indexdef(x.indexrelid) as definition
       from pg_index x join pg_class i on i.oid = x.indexrelid where x.indrelid = ${table}`,
    );
    const constraints = await rows<{ name: string; kind: string; definition: string }>(
      db,
      `select conname as name, contype::text as kind, pg_get_constraintdef(oid) as definition
       from pg_constraint where conrelid = ${table}`,
    );
    const foreignKeys = await rows<{
      columns: string[];
      table: string;
      references: string[];
      on_delete: string;
      on_update: string;
    }>(
      db,
      `select array(select a.attname::text from unnest(c.conkey) with ordinality k(attnum, n)
                    join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.attnum order by k.n) as columns,
         t.relname as table,
         array(select a.attname::text from unnest(c.confkey) with ordinality k(attnum, n)
               join pg_attribute a on a.attrelid = c.confrelid and a.attnum = k.attnum order by k.n) as references,
         c.confdeltype::text as on_delete, c.confupdtype::text as on_update
       from pg_constraint c join pg_class t on t.oid = c.confrelid
       where c.conrelid = ${table} and c.contype = 'f'`,
    );
    out[name] = {
      columns: columns.map((c) => ({
        name: c.name,
        type: c.type,
        notNull: c.not_null,
        default: c.default,
        pk: c.pk,
        ...(c.identity === '' ? {} : { identity: c.identity === 'a' ? 'always' : 'by default' }),
      })),
      indexes: byName(indexes),
      foreignKeys: sortForeignKeys(
        foreignKeys.map((fk) => ({
          columns: fk.columns,
          table: fk.table,
          references: fk.references,
          onDelete: PG_ACTIONS[fk.on_delete] ?? fk.on_delete,
          onUpdate: PG_ACTIONS[fk.on_update] ?? fk.on_update,
        })),
      ),
      constraints: byName(constraints),
    };
  }
  return out;
}

/** pg_constraint's one-letter referential actions, spelled as SQLite's pragma spells them. */
const PG_ACTIONS: Record<string, string> = {
  a: 'NO ACTION',
  r: 'RESTRICT',
  c: 'CASCADE',
  n: 'SET NULL',
  d: 'SET DEFAULT',
};
