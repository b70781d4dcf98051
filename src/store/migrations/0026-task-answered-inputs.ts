/**
 * Issue 23: which input requests of a task its client has answered (`tasks/update`, the dashboard's answer
 * form), so `tasks/get` of a task waiting for input is an ordinary read: it hides the answered requests
 * (and says `working` once all are answered) without asking the live workflow. Hashes of the keys, comma
 * terminated (store/tasks/answered-inputs.ts); null while none is answered.
 */
import type { Migration } from 'kysely';
import { ddlMigration } from './ddl';

export const m0026TaskAnsweredInputs: Migration = ddlMigration(`
  alter table tasks add column answered_inputs text;
`);
