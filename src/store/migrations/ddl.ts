/**
 * Migrations as DDL text. A migration is plain SQL, `ddlMigration(\`create table …; create index …;\`)`:
 * statements ended by `;`, `--` comments to the end of a line. The spellings that differ between SQLite
 * and PostgreSQL are `{name}` placeholders filled in from DDL_PLACEHOLDERS (../dialect.ts: `{blob}`,
 * `{auto_increment_id}`); an unknown one stops the migration. The comments are dropped and the
 * statements run one by one, in order (on PostgreSQL inside the migration's transaction). No string
 * literal in the text may hold `;`, `--` or braces.
 */
import type { Kysely, Migration } from 'kysely';
import { sql } from 'kysely';
import { DDL_PLACEHOLDERS, dialectOf, type DialectName } from '../dialect';

/** A migration whose `up` runs `text` (see above). */
export function ddlMigration(text: string): Migration {
  return { up: (db: Kysely<unknown>) => ddl(db, text) };
}

/** Runs DDL text on `db`: for a migration whose `up` has more to do than run its text. */
export async function ddl(db: Kysely<unknown>, text: string): Promise<void> {
  for (const statement of ddlStatements(text, dialectOf(db))) await sql.raw(statement).execute(db);
}

/** The statements `ddl` runs, spelled for `dialect`. */
export function ddlStatements(text: string, dialect: DialectName): string[] {
  const spelled = text.replace(/--.*$/gm, '').replace(/\{(\w+)\}/g, (_, name: string) => {
    const spelling = DDL_PLACEHOLDERS[name];
    if (spelling === undefined) throw new Error(`ddl: unknown placeholder {${name}}`);
    return spelling[dialect];
  });
  return spelled
    .split(';')
    .map((statement) => statement.replace(/\s+/g, ' ').trim())
    .filter((statement) => statement !== '');
}
