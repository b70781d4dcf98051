/**
 * The store on the database under test (the `sqlite` and `postgres` jest projects): migrations, the task
 * store's contract, value round-trips, and encryption at rest checked against the raw storage.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import pg from 'pg';
import type { TaskSnapshot } from '../../src/protocol';
import { Cipher, generateKey } from '../../src/store/cipher';
import type { StoreConfig } from '../../src/store/database';
import { openDatabase } from '../../src/store/database';
import { dialectOf } from '../../src/store/dialect';
import { migrationProvider } from '../../src/store/migrations';
import type { Database } from '../../src/store/schema';
import { PayloadStore } from '../../src/store/tasks/payload-store';
import type { NewTask } from '../../src/store/tasks/task-store';
import { TaskStore, taskKeyOf } from '../../src/store/tasks/task-store';
import { testDatabase, testStoreConfig, type TestStoreConfig } from '../helpers/store';

const DB = testDatabase();
const cipher = new Cipher({ activeKeyId: 'k1', keys: { k1: generateKey() } });
let dir: string;
const opened: Array<Kysely<Database>> = [];

async function open(config: StoreConfig): Promise<Kysely<Database>> {
  const db = await openDatabase(config);
  opened.push(db);
  return db;
}

async function close(db: Kysely<Database>): Promise<void> {
  opened.splice(opened.indexOf(db), 1);
  await db.destroy();
}

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-db-test-'));
});

afterAll(async () => {
  for (const db of opened.splice(0)) await db.destroy();
  rmSync(dir, { recursive: true, force: true });
});

function snapshot(overrides: Partial<TaskSnapshot> = {}): TaskSnapshot {
  return {
    status: 'working',
    createdAt: '2026-01-01T00:00:00.000Z',
    lastUpdatedAt: '2026-01-01T00:00:00.000Z',
    ttlMs: 60_000,
    pollIntervalMs: 500,
    ...overrides,
  };
}

function newTask(overrides: Partial<NewTask> = {}): NewTask {
  return {
    taskKey: taskKeyOf(randomUUID()),
    workflowId: `wf-${randomUUID()}`,
    project: 'demo',
    caller: { kind: 'api_key', id: 'key-1' },
    upstream: 'example',
    tool: 'slow_echo',
    authorizationId: null,
    snapshot: snapshot(),
    ...overrides,
  };
}

describe(`store on ${DB}`, () => {
  let db: Kysely<Database>;
  let store: TaskStore;

  beforeAll(async () => {
    db = await open(await testStoreConfig(dir));
    store = new TaskStore(db, cipher);
  });

  it('talks to the database under test', () => {
    expect(dialectOf(db as Kysely<unknown>)).toBe(DB);
  });

  it('applies every migration, and opening again is a no-op', async () => {
    const names = Object.keys(await migrationProvider.getMigrations()).sort();
    const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
    expect(applied.rows.map((r) => r.name)).toEqual(names);
  });

  it('inserts a task idempotently and reads it back', async () => {
    const task = newTask({ snapshot: snapshot({ statusMessage: 'started', ttlMs: null }) });
    await store.insertTask(task);
    await store.insertTask(task);
    const got = await store.getTask(task.taskKey);
    expect(got).toEqual({
      taskKey: task.taskKey,
      workflowId: task.workflowId,
      project: 'demo',
      caller: { kind: 'api_key', id: 'key-1' },
      upstream: 'example',
      tool: 'slow_echo',
      authorizationId: null,
      snapshot: { ...task.snapshot, ttlMs: null },
      // Due for its first watch from the moment it is recorded.
      watchDueAt: expect.any(String),
    });
    expect(await store.listEvents(task.taskKey)).toEqual([
      { at: task.snapshot.lastUpdatedAt, kind: 'status', status: 'working', statusMessage: 'started' },
    ]);
    expect(await store.getTask(taskKeyOf('unknown'))).toBeUndefined();
  });

  it('marks a running task due between its watches, reports the oldest per project and upstream, and forgets a finished one', async () => {
    const upstream = `up-${randomUUID().slice(0, 8)}`;
    const [a, b] = [newTask({ upstream }), newTask({ upstream })];
    await store.insertTask(a);
    await store.insertTask(b);
    const due = async () => (await store.overdueWatches()).filter((o) => o.upstream === upstream);
    const dueSince = (await store.getTask(a.taskKey))?.watchDueAt;
    expect(await due()).toEqual([{ project: 'demo', upstream, dueSince }]);

    await store.watchStarted(a.taskKey);
    await store.watchStarted(b.taskKey);
    expect((await store.getTask(a.taskKey))?.watchDueAt).toBeUndefined();
    expect(await due()).toEqual([]);

    await store.watchDue(b.taskKey);
    expect(await due()).toEqual([
      { project: 'demo', upstream, dueSince: (await store.getTask(b.taskKey))?.watchDueAt },
    ]);
    // A change recorded between two watches marks the task due as well.
    await store.watchStarted(b.taskKey);
    await store.recordSnapshot(b.taskKey, snapshot({ statusMessage: 'half way' }));
    expect((await store.getTask(b.taskKey))?.watchDueAt).toEqual(expect.any(String));
    // A finished task is due for nothing, and a late watch's mark does not bring it back.
    await store.recordSnapshot(b.taskKey, snapshot({ status: 'completed', result: { content: [] } }));
    expect(await due()).toEqual([]);
    await store.watchDue(b.taskKey);
    expect((await store.getTask(b.taskKey))?.watchDueAt).toBeUndefined();
    expect(await due()).toEqual([]);
  });

  it('records snapshots, with history only on changes, and a terminal status is final', async () => {
    const task = newTask();
    await store.insertTask(task);
    const t = (s: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();

    expect(await store.recordSnapshot(task.taskKey, snapshot({ lastUpdatedAt: t(1) }))).toBe(true);
    expect(
      await store.recordSnapshot(
        task.taskKey,
        snapshot({
          status: 'input_required',
          lastUpdatedAt: t(2),
          inputRequests: { q: { method: 'elicitation/create', params: { message: 'which?' } } },
        }),
      ),
    ).toBe(true);
    const result = { content: [{ type: 'text', text: 'done' }], isError: false };
    expect(
      await store.recordSnapshot(
        task.taskKey,
        snapshot({ status: 'completed', lastUpdatedAt: t(3), result }),
      ),
    ).toBe(true);
    // Terminal is final: a late observation changes nothing.
    expect(
      await store.recordSnapshot(task.taskKey, snapshot({ status: 'working', lastUpdatedAt: t(4) })),
    ).toBe(false);
    expect(await store.recordSnapshot(taskKeyOf('unknown'), snapshot())).toBe(false);

    const got = await store.getTask(task.taskKey);
    expect(got?.snapshot).toMatchObject({ status: 'completed', lastUpdatedAt: t(3), result, ttlMs: 60_000 });
    expect(got?.snapshot.inputRequests).toBeUndefined();
    const events = await store.listEvents(task.taskKey);
    expect(events.map((e) => [e.status, e.at])).toEqual([
      ['working', task.snapshot.lastUpdatedAt],
      ['input_required', t(2)],
      ['completed', t(3)],
    ]);
  });

  it('writes what belongs with a record in its transaction: both commit, or neither', async () => {
    const task = newTask();
    await store.insertTask(task);
    const payloads = new PayloadStore(db, cipher);
    let detailRef: string | undefined;
    const working = snapshot({ statusMessage: 'half way', lastUpdatedAt: '2026-01-01T00:00:01.000Z' });
    expect(
      await store.recordSnapshot(task.taskKey, working, async (trx) => {
        detailRef = await payloads.put(task.taskKey, 'detail', { statusMessage: 'half way' }, trx);
      }),
    ).toBe(true);
    expect(await payloads.get(detailRef ?? '', task.taskKey, 'detail')).toEqual({
      statusMessage: 'half way',
    });

    // A failed write of its own undoes the record, and the other way round.
    const done = snapshot({ status: 'completed', result: { content: [] } });
    await expect(
      store.recordSnapshot(task.taskKey, done, async (trx) => {
        await payloads.put(task.taskKey, 'detail', { statusMessage: 'never' }, trx);
        throw new Error('the payload write failed');
      }),
    ).rejects.toThrow('the payload write failed');
    expect((await store.getTask(task.taskKey))?.snapshot.status).toBe('working');
    const rows = await db.selectFrom('payloads').select('id').where('task_key', '=', task.taskKey).execute();
    expect(rows.map((r) => r.id)).toEqual([detailRef]);

    // Run whether or not the record changes anything (a terminal status is final).
    expect(await store.recordSnapshot(task.taskKey, done)).toBe(true);
    let ran = false;
    expect(
      await store.recordSnapshot(task.taskKey, working, async () => {
        ran = true;
      }),
    ).toBe(false);
    expect(ran).toBe(true);
  });

  it('round-trips bigint, integer, text and binary values with JS types', async () => {
    const big = 2 ** 50 + 3;
    const task = newTask({ snapshot: snapshot({ ttlMs: big, pollIntervalMs: 2_000_000_000 }) });
    await store.insertTask(task);
    const got = await store.getTask(task.taskKey);
    expect(got?.snapshot.ttlMs).toBe(big);
    expect(got?.snapshot.pollIntervalMs).toBe(2_000_000_000);

    const bytes = Buffer.concat([Buffer.from([0, 255, 0x5c, 0x27, 0x22, 0]), randomBytes(4096)]);
    await db.updateTable('tasks').set({ detail: bytes }).where('task_key', '=', task.taskKey).execute();
    const row = await db
      .selectFrom('tasks')
      .select(['detail', 'ttl_ms', 'poll_interval_ms', 'status_message'])
      .where('task_key', '=', task.taskKey)
      .executeTakeFirstOrThrow();
    expect(Buffer.isBuffer(row.detail)).toBe(true);
    expect(row.detail?.equals(bytes)).toBe(true);
    expect(row.ttl_ms).toBe(big);
    expect(row.poll_interval_ms).toBe(2_000_000_000);
    expect(row.status_message).toBeNull();

    const ids = await db.selectFrom('task_events').select('id').orderBy('id').execute();
    expect(ids.length).toBeGreaterThan(0);
    for (const { id } of ids) expect(typeof id).toBe('number');
    const count = await db
      .selectFrom('task_events')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(count.n).toBe(ids.length);
  });

  it('deletes a task with its history (foreign key cascade)', async () => {
    const task = newTask();
    await store.insertTask(task);
    await db.deleteFrom('tasks').where('task_key', '=', task.taskKey).execute();
    expect(await store.listEvents(task.taskKey)).toEqual([]);
  });
});

describe(`opening the ${DB} store`, () => {
  it('migrates once when several processes open a fresh database at the same time', async () => {
    const config = await testStoreConfig(dir);
    const dbs = await Promise.all([open(config), open(config), open(config)]);
    const store = new TaskStore(dbs[2] as Kysely<Database>, cipher);
    const task = newTask();
    await new TaskStore(dbs[0] as Kysely<Database>, cipher).insertTask(task);
    expect((await store.getTask(task.taskKey))?.workflowId).toBe(task.workflowId);
    for (const db of dbs) await close(db);
  });

  it(
    DB === 'postgres' ? 'prefers postgresUrl over sqliteFile' : 'creates the SQLite file and its directory',
    async () => {
      const sqliteFile = path.join(dir, randomUUID(), 'taskrouter.db');
      const config = DB === 'postgres' ? { sqliteFile, ...(await testStoreConfig(dir)) } : { sqliteFile };
      const db = await open(config);
      expect(dialectOf(db as Kysely<unknown>)).toBe(DB);
      expect(existsSync(sqliteFile)).toBe(DB === 'sqlite');
      await close(db);
    },
  );

  // SQLite's own setting: the PostgreSQL project has no such test (the server's synchronous_commit rules).
  if (DB === 'sqlite')
    it('SQLite commits are flushed as configured (normal by default), on a new file and after its first write', async () => {
      const level = async (db: Kysely<Database>) =>
        (await sql<{ synchronous: number }>`pragma synchronous`.execute(db)).rows[0]?.synchronous;
      for (const [setting, expected] of [
        [undefined, 1],
        ['full', 2],
      ] as const) {
        const sqliteFile = path.join(dir, randomUUID(), 'taskrouter.db');
        const db = await open({ sqliteFile, ...(setting && { sqliteSynchronous: setting }) });
        expect(await level(db)).toBe(expected);
        await new TaskStore(db, cipher).insertTask(newTask());
        expect(await level(db)).toBe(expected);
        await close(db);
        // Opened again, the file already in WAL mode.
        const again = await open({ sqliteFile, ...(setting && { sqliteSynchronous: setting }) });
        expect(await level(again)).toBe(expected);
        await close(again);
      }
    });

  it('fails clearly on a database it cannot open', async () => {
    let config: TestStoreConfig;
    if (DB === 'sqlite') {
      const file = path.join(dir, `${randomUUID()}.txt`);
      writeFileSync(file, 'not a directory');
      config = { sqliteFile: path.join(file, 'x.db') };
    } else {
      const url = new URL(((await testStoreConfig(dir)) as { postgresUrl: string }).postgresUrl);
      url.pathname = '/no_such_database';
      config = { postgresUrl: url.toString() };
    }
    await expect(openDatabase(config)).rejects.toThrow(
      DB === 'sqlite' ? /EEXIST|ENOTDIR/ : /no_such_database/,
    );
  });
});

describe(`encryption at rest on ${DB}`, () => {
  it('the raw storage holds task details only encrypted', async () => {
    const marker = `MARKER-${randomUUID()}`;
    const visibleTool = `tool-${randomUUID()}`;
    const config = await testStoreConfig(dir);
    const db = await open(config);
    const store = new TaskStore(db, cipher);
    const task = newTask({
      tool: visibleTool,
      snapshot: snapshot({
        status: 'completed',
        result: { content: [{ type: 'text', text: `secret ${marker}` }] },
      }),
    });
    await store.insertTask(task);
    // The store itself decrypts it.
    expect(JSON.stringify((await store.getTask(task.taskKey))?.snapshot.result)).toContain(marker);

    if ('sqliteFile' in config) {
      await close(db);
      const files = [config.sqliteFile, `${config.sqliteFile}-wal`].filter((f) => existsSync(f));
      const raw = Buffer.concat(files.map((f) => readFileSync(f)));
      // Positive control: unencrypted columns are visible in these bytes, so we read the right storage.
      expect(raw.includes(visibleTool)).toBe(true);
      expect(raw.includes(marker)).toBe(false);
    } else {
      const rows = await sql<{ row_text: string; detail: Buffer }>`
        select t::text as row_text, t.detail from tasks t where t.task_key = ${task.taskKey}`.execute(db);
      const row = rows.rows[0];
      expect(row?.row_text).toContain(visibleTool);
      expect(row?.row_text).not.toContain(marker);
      expect(row?.row_text).not.toContain(Buffer.from(marker).toString('hex'));
      expect(Buffer.isBuffer(row?.detail)).toBe(true);
      expect(row?.detail.includes(marker)).toBe(false);
      // And nothing anywhere in the database's tables has it in plain text.
      const dump = await sql<{ n: number }>`
        select count(*) as n from tasks t where t::text like ${`%${marker}%`}`.execute(db);
      expect(dump.rows[0]?.n).toBe(0);
      await close(db);
    }
  });
});

if (DB === 'postgres') {
  describe('PostgreSQL time limits (docs/storage.md)', () => {
    const LIMIT_MS = 500;

    test('a statement stuck behind a lock fails after the limit; the pool goes on serving', async () => {
      const config = await testStoreConfig(dir);
      const db = await open({ ...config, postgresStatementTimeoutMs: LIMIT_MS });
      const key = taskKeyOf(randomUUID());
      await db
        .insertInto('first_calls')
        .values({ task_key: key, state: 'sending', at: new Date().toISOString() })
        .execute();
      // Another session (not bound by the gateway's limits) holds the row and does not let go.
      const holder = new pg.Client({ connectionString: (config as { postgresUrl: string }).postgresUrl });
      await holder.connect();
      try {
        await holder.query('begin');
        await holder.query('select * from first_calls where task_key = $1 for update', [key]);
        const stuck = db
          .updateTable('first_calls')
          .set({ state: 'done' })
          .where('task_key', '=', key)
          .execute();
        await expect(stuck).rejects.toThrow(/statement timeout/);
        // The pool's connections are fine: the next query runs.
        const row = await db
          .selectFrom('first_calls')
          .select('state')
          .where('task_key', '=', key)
          .executeTakeFirst();
        expect(row?.state).toBe('sending');
      } finally {
        await holder.query('rollback').catch(() => undefined);
        await holder.end();
      }
      await close(db);
    });

    test('a transaction left open between statements is ended by the server, and its broken connection crashes nothing', async () => {
      const db = await open({ ...(await testStoreConfig(dir)), postgresStatementTimeoutMs: LIMIT_MS });
      const idle = db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        await new Promise((r) => setTimeout(r, LIMIT_MS * 4));
        await sql`select 1`.execute(trx);
      });
      await expect(idle).rejects.toThrow();
      expect((await sql<{ one: number }>`select 1 as one`.execute(db)).rows[0]?.one).toBe(1);
      await close(db);
    });
  });
}
