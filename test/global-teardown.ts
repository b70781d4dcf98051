/** Stops the shared dev server started by test/global-setup.ts, by its own pid only. */
import { rmSync } from 'node:fs';
import { stopProcessByPid } from '../src/temporal/dev-server';
import { GLOBAL_KEY, sharedServerSlot } from './global-setup';

export default async function globalTeardown(): Promise<void> {
  const slot = sharedServerSlot();
  const shared = slot[GLOBAL_KEY];
  if (shared === undefined) return;
  delete slot[GLOBAL_KEY];
  // Prefer the handle (it also waits on the child's exit event); fall back to the bare pid.
  if (shared.server !== undefined) await shared.server.stop();
  else await stopProcessByPid(shared.pid);
  rmSync(shared.infoFile, { force: true });
}
