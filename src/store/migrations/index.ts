/** Schema migrations, applied in order at start-up by Kysely's migrator. One file per migration. */
import type { Migration, MigrationProvider } from 'kysely';
import { m0001Tasks } from './0001-tasks';

const migrations: Record<string, Migration> = {
  '0001_tasks': m0001Tasks,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve(migrations),
};
