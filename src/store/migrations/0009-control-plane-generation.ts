/**
 * One counter that every control-plane change bumps in its own transaction. API replicas cache what
 * they read per request (tokens, projects, access, credentials) and drop it all when the counter moves,
 * so a revoked token or removed member stops working on every replica within the check interval
 * (src/store/control-plane/serving-cache.ts), without reading the tables on every request.
 */
import type { Kysely, Migration } from 'kysely';

export const m0009ControlPlaneGeneration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('control_plane_generation')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('generation', 'bigint', (c) => c.notNull())
      .execute();
    await (db as Kysely<{ control_plane_generation: { id: number; generation: number } }>)
      .insertInto('control_plane_generation')
      .values({ id: 1, generation: 0 })
      .execute();
  },
};
