/**
 * The dashboard's reads on a growing project (SQLite): a page of the Tasks view and the tab counts,
 * with and without the Assigned filter, for a small and a large project measured side by side in one
 * run. The ratio large/small says whether a refresh (every 2 s per open tab) grows with the project.
 *
 *   npm run bench:dashboard [-- small large]   (defaults 1000 and 20000 tasks)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Cipher, generateKey } from '../src/store/cipher';
import { openDatabase } from '../src/store/database';
import type { TaskListQuery } from '../src/store/tasks/task-store';
import { TaskStore } from '../src/store/tasks/task-store';
import { percentile, ratio, round, table } from './support';
import { newTask } from '../test/helpers/task-rows';

const STATUSES = ['working', 'input_required', 'completed', 'completed', 'failed', 'cancelled'] as const;
const RUNS = 200;

async function seeded(dir: string, tasks: number): Promise<{ store: TaskStore; close(): Promise<void> }> {
  const db = await openDatabase({ sqliteFile: path.join(dir, `bench-${tasks}.sqlite`) });
  const store = new TaskStore(db, new Cipher({ activeKeyId: 'k', keys: { k: generateKey() } }));
  const start = Date.UTC(2026, 10, 1);
  for (let i = 0; i < tasks; i++) {
    const key = randomBytes(32).toString('hex');
    const at = new Date(start + i * 1000).toISOString();
    const snapshot = { status: STATUSES[i % STATUSES.length] ?? 'working', statusMessage: 'Computing' };
    await store.insertTask(newTask(key, at, snapshot, { project: 'p1', caller: { kind: 'user', id: 'u1' } }));
    if (i % 7 === 0) await store.assign(key, 'u2', 'user:u1', at);
  }
  return { store, close: () => db.destroy() };
}

async function timed(fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < 10; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return samples;
}

async function main(): Promise<void> {
  const small = Number(process.argv[2] ?? 1000);
  const large = Number(process.argv[3] ?? 20000);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-bench-dashboard-'));
  try {
    process.stdout.write(`seeding ${small} and ${large} tasks…\n`);
    const a = await seeded(dir, small);
    const b = await seeded(dir, large);
    const page = (q: Partial<TaskListQuery>) => (s: TaskStore) =>
      s.listProjectTasks({ project: 'p1', group: 'all', limit: 51, ...q });
    const cases: Array<[string, (s: TaskStore) => Promise<unknown>]> = [
      ['page: all', page({})],
      ['page: pending', page({ group: 'pending' })],
      ['page: assigned to me', page({ assigned: { kind: 'user', userId: 'u2' } })],
      ['counts', (s) => s.countProjectTasks('p1')],
      ['counts: assigned to me', (s) => s.countProjectTasks('p1', { kind: 'user', userId: 'u2' })],
    ];
    const rows: Array<Array<string | number>> = [
      ['query', `p50 ms (${small})`, `p50 ms (${large})`, 'ratio p50', 'ratio p99'],
    ];
    for (const [name, fn] of cases) {
      // Interleaved, so both sizes see the same machine load.
      const sa: number[] = [];
      const sb: number[] = [];
      for (let pass = 0; pass < 3; pass++) {
        sa.push(...(await timed(() => fn(a.store))));
        sb.push(...(await timed(() => fn(b.store))));
      }
      const [a50, a99, b50, b99] = [
        percentile(sa, 50),
        percentile(sa, 99),
        percentile(sb, 50),
        percentile(sb, 99),
      ];
      rows.push([name, round(a50, 3), round(b50, 3), ratio(b50, a50), ratio(b99, a99)]);
    }
    process.stdout.write(`${table(rows)}\n`);
    await a.close();
    await b.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
