/**
 * The input requests of a task its client has answered (`tasks.answered_inputs`, migration 0026). Input
 * keys are unique for a task's whole life (the workflow never shows an answered one again, task-state.ts),
 * so the set only grows. Kept as hashes of the keys: the keys are the upstream's words, and nothing an
 * upstream writes is stored in the clear; fixed-length hex also needs no escaping in the comma list.
 */
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Database } from '../schema';

export function answeredInputHash(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 32);
}

/** The hashes recorded in a row's column. */
export function parseAnsweredInputs(column: string | null | undefined): string[] {
  return column ? column.split(',').filter((h) => h !== '') : [];
}

/** Adds answered keys in one statement (concurrent answers append, none overwrites another). */
export async function recordAnsweredInputs(
  db: Kysely<Database>,
  taskKey: string,
  keys: readonly string[],
): Promise<void> {
  if (keys.length === 0) return;
  const added = `${keys.map(answeredInputHash).join(',')},`;
  await db
    .updateTable('tasks')
    .set({ answered_inputs: sql<string>`coalesce(answered_inputs, '') || ${added}` })
    .where('task_key', '=', taskKey)
    .execute();
}
