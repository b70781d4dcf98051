/**
 * Opens the store database and brings its schema up to date. Two dialects, one schema:
 *
 * - SQLite (better-sqlite3): the embedded default, one file, for a single gateway/worker host.
 * - PostgreSQL (`pg` pool): for several gateway/worker processes; `store.postgresUrl` selects it.

 * Migrations (src/store/migrations) are DDL text (src/store/migrations/ddl.ts) with the dialect
 * placeholders of ./dialect.ts; its header says how to write a migration that runs on both.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { migrationProvider } from './migrations';
import type { Database } from './schema';
import { withStatementCache } from './statement-cache';

/** The `store` section of the configuration. `postgresUrl` wins when set. */
export interface StoreConfig {
  sqliteFile?: string;
  /** When a SQLite commit is flushed to disk (docs/storage.md, "Durability"); default `normal`. */
  sqliteSynchronous?: SqliteSynchronous;
  postgresUrl?: string;
  /** Longest PostgreSQL statement, and longest wait for a pooled connection (default 30 s). */
  postgresStatementTimeoutMs?: number;
}

/**
 * `normal`: the write-ahead log is flushed at checkpoints, not at each commit (a commit survives the
 * process being killed, not the host losing power). `full`: flushed at each commit (survives both).
 */
export type SqliteSynchronous = 'normal' | 'full';

/** Opens the configured database (PostgreSQL when `postgresUrl` is set, else SQLite) and migrates it. */
export async function openDatabase(store: StoreConfig): Promise<Kysely<Database>> {
  if (store.postgresUrl) {
    return openPostgresDatabase(store.postgresUrl, {
      ...(store.postgresStatementTimeoutMs !== undefined && {
        statementTimeoutMs: store.postgresStatementTimeoutMs,
      }),
    });
  }
  if (store.sqliteFile === undefined) throw new Error('store: neither postgresUrl nor sqliteFile is set');
  return openSqliteDatabase(store.sqliteFile, store.sqliteSynchronous);
}

export async function openSqliteDatabase(
  file: string,
  synchronous: SqliteSynchronous = 'normal',
): Promise<Kysely<Database>> {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const sqlite = new SQLite(file);
  // WAL lets the API read while the worker writes; a busy timeout absorbs short write contention
  // between the two when they run as separate processes on one file.
  sqlite.pragma('journal_mode = WAL');
  // Said explicitly: unset, it was `normal` already, by better-sqlite3's build default for databases in
  // WAL mode (SQLITE_DEFAULT_WAL_SYNCHRONOUS=1), which `PRAGMA synchronous` on a new file misreports as
  // `full` until the connection's first transaction. Now a choice, and an operator may choose `full`.
  sqlite.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  sqlite.pragma('foreign_keys = ON');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  // Kysely runs SQLite migrations without a transaction or lock, so two processes opening a fresh file
  // at once would both create the tables. BEGIN IMMEDIATE takes the write lock first (waiting up to the
  // busy timeout): migrations are serialized across processes and each one applies all or nothing.
  // (A future migration that needs `PRAGMA foreign_keys = OFF` cannot run inside it: change this then.)
  try {
    await beginImmediate(sqlite);
    await migrate(db);
    sqlite.exec('COMMIT');
  } catch (err) {
    if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
    await db.destroy();
    throw err;
  }
  return db;
}

const SQLITE_BUSY_TIMEOUT_MS = 5000;
const SQLITE_MIGRATION_LOCK_TIMEOUT_MS = 60_000;

/**
 * BEGIN IMMEDIATE, polling instead of using the busy timeout: better-sqlite3 waits synchronously, which
 * would also stall a holder in this very process (several stores opened at once, as tests do).
 */
async function beginImmediate(sqlite: SQLite.Database): Promise<void> {
  const deadline = Date.now() + SQLITE_MIGRATION_LOCK_TIMEOUT_MS;
  sqlite.pragma('busy_timeout = 0');
  try {
    for (;;) {
      try {
        sqlite.exec('BEGIN IMMEDIATE');
        return;
      } catch (err) {
        const busy = (err as { code?: unknown }).code === 'SQLITE_BUSY';
        if (!busy || Date.now() >= deadline) throw err;
        await sleep(20);
      }
    }
  } finally {
    sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  }
}

export interface PostgresOptions {
  /** Pool size (default 10). Each process opens its own pool. */
  maxConnections?: number;
  /** Longest statement and longest wait for a pooled connection (default 30 s; migrations: none). */
  statementTimeoutMs?: number;
}

const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;
/** The client gives up this long after the server should have: the server's own error is the clearer one. */
const CLIENT_GRACE_MS = 5000;
/** TCP keep-alive probes begin after this much silence on a connection (the OS default is 2 h). */
const KEEP_ALIVE_AFTER_MS = 10_000;

/** `postgres://user:password@host:port/database` (libpq-style URL, as understood by `pg`). */
export async function openPostgresDatabase(
  url: string,
  opts: PostgresOptions = {},
): Promise<Kysely<Database>> {
  // Migrations may build an index over a large table for minutes: their own connection, no time limit.
  const migrations = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: poolOf(url, { max: 1 }) }),
  });
  try {
    await migrate(migrations);
  } finally {
    await migrations.destroy();
  }
  const timeout = opts.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  // Nothing waits forever: a statement stuck behind a lock, a transaction left open, a server that stopped
  // answering or a pool with every connection taken fails with an error after `timeout`, and the loops
  // that use the store (the watch hub's claims, the reconciler, retention) go on at their next turn.
  const pool = poolOf(url, {
    max: opts.maxConnections ?? 10,
    statement_timeout: timeout,
    idle_in_transaction_session_timeout: timeout,
    query_timeout: timeout + CLIENT_GRACE_MS,
    connectionTimeoutMillis: timeout,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEP_ALIVE_AFTER_MS,
  });
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}

function poolOf(url: string, options: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    types: { getTypeParser: pgTypeParser as typeof pg.types.getTypeParser },
    ...options,
  });
  // A connection that breaks (server restart, network, a limit above) emits 'error': on the pool while it
  // is idle, on its client while it is lent out between two statements. Without a listener either would
  // crash the process. The statement that needed it fails instead, and the pool drops the broken client
  // when it comes back (the next query reconnects).
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

const PG_INT8_OID = 20;

/** int8 as a JS number, like SQLite returns it; a value that a number cannot hold exactly is an error. */
function parseInt8(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new RangeError(`int8 value ${value} exceeds Number.MAX_SAFE_INTEGER`);
  return n;
}

function pgTypeParser(oid: number, format?: 'text' | 'binary'): unknown {
  if (oid === PG_INT8_OID && format !== 'binary') return parseInt8;
  return (pg.types.getTypeParser as (oid: number, format?: string) => unknown)(oid, format);
}

async function migrate(db: Kysely<Database>): Promise<void> {
  // Several processes may start at once against one database: on PostgreSQL, Kysely's migrator serializes
  // them with an advisory lock and runs each migration in a transaction (SQLite: see openSqliteDatabase).
  // 0008 was merged after 0009: a store that already ran 0009 runs 0008 then, instead of refusing.
  const { error, results } = await new Migrator({
    db,
    provider: migrationProvider,
    allowUnorderedMigrations: true,
  }).migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error ?? failed) {
    throw new Error(`Store migration failed${failed ? ` at ${failed.migrationName}` : ''}: ${String(error)}`);
  }
}
