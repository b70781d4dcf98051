/**
 * better-sqlite3 behind Kysely with its prepared statements kept. Kysely's SQLite driver calls
 * `prepare(sql)` for every query, so SQLite parses and plans the same few hundred statements again on
 * every request: with tasks being created, preparing was about a tenth of the gateway's busy time
 * (docs/performance.md). A statement is reusable as long as it is not used by two queries at once;
 * better-sqlite3 is synchronous and Kysely never streams here (no `.stream()`), so a query runs to its
 * end before the next one starts. Kept in least-recently-used order up to `max`, since statements with
 * `in (…)` lists of varying length are distinct strings.
 */
import type SQLite from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';

export function withStatementCache(db: SQLite.Database, max = 1000): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => db.close(),
    prepare(sql) {
      const kept = cache.get(sql);
      if (kept) {
        // Map keeps insertion order: re-inserting makes this the most recently used.
        cache.delete(sql);
        cache.set(sql, kept);
        return kept;
      }
      const stmt = db.prepare(sql);
      cache.set(sql, stmt);
      if (cache.size > max) {
        const oldest = cache.keys().next().value;
        if (oldest !== undefined) cache.delete(oldest);
      }
      return stmt;
    },
  };
}
