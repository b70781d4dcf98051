/**
 * Issue 23: which input requests of a task its client has answered (`tasks/update`, the dashboard's answer
 * form), so `tasks/get` of a task waiting for input is an ordinary read: it hides the answered requests
 * (and says `working` once all are answered) without asking the live workflow. Hashes of the keys, comma
 * terminated (store/tasks/answered-inputs.ts); null while none is answered.
 */
import type { Kysely, Migration } from 'kysely';

export const m0026TaskAnsweredInputs: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('tasks').addColumn('answered_inputs', 'text').execute();
  },
};
