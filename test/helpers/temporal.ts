/**
 * Where test files find the shared Temporal dev server started by test/global-setup.ts.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findRepoRoot } from '../../src/config/paths';

export interface TestTemporalInfo {
  address: string;
  namespace: string;
}

/** Per-checkout file name, so two clones running tests at once don't read each other's server. */
export function defaultTestInfoFile(): string {
  const tag = createHash('sha256').update(findRepoRoot(__dirname)).digest('hex').slice(0, 12);
  return path.join(os.tmpdir(), `taskrouter-temporal-test-${tag}.json`);
}

/**
 * Jest workers inherit process.env from the main process after globalSetup ran, so env is the normal path;
 * the JSON file covers runners that start workers with a fresh environment.
 */
export function testTemporal(): TestTemporalInfo {
  const address = process.env['TEMPORAL_TEST_ADDRESS'];
  const namespace = process.env['TEMPORAL_TEST_NAMESPACE'];
  if (address && namespace) return { address, namespace };

  const infoFile = process.env['TEMPORAL_TEST_INFO'] || defaultTestInfoFile();
  let info: Partial<TestTemporalInfo> = {};
  try {
    info = JSON.parse(readFileSync(infoFile, 'utf8')) as Partial<TestTemporalInfo>;
  } catch {
    // Fall through to the error below.
  }
  if (typeof info.address === 'string' && typeof info.namespace === 'string') {
    return { address: info.address, namespace: info.namespace };
  }
  throw new Error(
    'No shared Temporal dev server: TEMPORAL_TEST_ADDRESS/TEMPORAL_TEST_NAMESPACE are not set. ' +
      'Run tests through jest with jest.config.js (its globalSetup starts the server).',
  );
}

/**
 * Local activities a workflow history recorded (their `core_local_activity` markers; patch markers,
 * `core_patch`, are in nearly every history and do not count).
 */
export function localActivityMarkers(
  events: ReadonlyArray<{ markerRecordedEventAttributes?: { markerName?: string | null } | null }>,
): number {
  return events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length;
}
