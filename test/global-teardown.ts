/** Stops the shared dev server and PostgreSQL cluster started by test/global-setup.ts, by their own pids only. */
import { rmSync } from 'node:fs';
import { stopProcessByPid } from '../src/tooling/processes';
import { GLOBAL_KEY, sharedServerSlot } from './global-setup';

export default async function globalTeardown(): Promise<void> {
  const slot = sharedServerSlot();
  const shared = slot[GLOBAL_KEY];
  if (shared === undefined) return;
  delete slot[GLOBAL_KEY];
  // Prefer the handle (it also waits on the child's exit event); fall back to the bare pid.
  const temporal = shared.server !== undefined ? shared.server.stop() : stopProcessByPid(shared.pid);
  // Fast shutdown ends the sessions pools may still hold, then the cluster's directory is removed.
  const postgres = shared.postgres?.stop();
  await Promise.all([temporal, postgres]);
  rmSync(shared.infoFile, { force: true });
  if (shared.scratchDir !== undefined) rmSync(shared.scratchDir, { recursive: true, force: true });
}
