/**
 * The database under test. jest.config.js runs the suite once per database (projects `sqlite` and
 * `postgres`); test/global-setup.ts starts one PostgreSQL cluster for the run and publishes its superuser
 * URL in TASKROUTER_TEST_POSTGRES_URL.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { openDatabase } from '../../src/store/database';
import type { Database } from '../../src/store/schema';
import { defaultTestInfoFile } from './temporal';

export type TestDatabase = 'sqlite' | 'postgres';

export type TestStoreConfig = { sqliteFile: string } | { postgresUrl: string };

/** Which database this test file runs against: the jest project's, else TASKROUTER_TEST_DB, else sqlite. */
export function testDatabase(): TestDatabase {
  const fromProject = (globalThis as { TASKROUTER_TEST_DB?: unknown }).TASKROUTER_TEST_DB;
  const db = typeof fromProject === 'string' ? fromProject : (process.env['TASKROUTER_TEST_DB'] ?? 'sqlite');
  if (db !== 'sqlite' && db !== 'postgres') throw new Error(`unknown test database ${db}`);
  return db;
}

/** Superuser URL of the run's PostgreSQL cluster (its `postgres` database). */
export function testPostgresUrl(): string {
  const fromEnv = process.env['TASKROUTER_TEST_POSTGRES_URL'];
  if (fromEnv) return fromEnv;
  const infoFile = process.env['TEMPORAL_TEST_INFO'] || defaultTestInfoFile();
  try {
    const info = JSON.parse(readFileSync(infoFile, 'utf8')) as { postgresUrl?: unknown };
    if (typeof info.postgresUrl === 'string') return info.postgresUrl;
  } catch {
    // Fall through to the error below.
  }
  throw new Error(
    'No shared PostgreSQL cluster: TASKROUTER_TEST_POSTGRES_URL is not set. Run tests through jest with ' +
      'jest.config.js (its globalSetup starts the cluster unless TASKROUTER_TEST_DB=sqlite).',
  );
}

/**
 * A store configuration of its own for the database under test: a SQLite file in `dir` (default: a new temp
 * directory under the run's scratch directory, which the global teardown removes), or a freshly created PostgreSQL database (random name; the
 * whole cluster is discarded at the end of the run).
 */
export async function testStoreConfig(dir?: string): Promise<TestStoreConfig> {
  if (testDatabase() === 'sqlite') {
    const scratch = process.env['TASKROUTER_TEST_SCRATCH'] || os.tmpdir();
    const parent = dir ?? mkdtempSync(path.join(scratch, 'taskrouter-store-'));
    return { sqliteFile: path.join(parent, `taskrouter-${randomBytes(6).toString('hex')}.db`) };
  }
  const adminUrl = testPostgresUrl();
  const name = `taskrouter_test_${randomBytes(8).toString('hex')}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { postgresUrl: url.toString() };
}

/**
 * A fresh database of the kind under test for the test file, opened (and migrated) before its tests and
 * closed after them: `db()` is the connection.
 */
export function freshDatabaseForFile(): () => Kysely<Database> {
  let db: Kysely<Database> | undefined;
  beforeAll(async () => {
    db = await openDatabase(await testStoreConfig());
  });
  afterAll(async () => {
    await db?.destroy();
  });
  return () => {
    if (!db) throw new Error('the database opens before the tests run');
    return db;
  };
}
