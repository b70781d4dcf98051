/**
 * What decides that an upstream task changed in a way that matters (status, status message, the set of
 * outstanding input keys), hashed: the workflow compares it without ever holding a status message, and
 * the API uses it to tell whether the live workflow and the store describe the same observation.
 */
import { createHash } from 'node:crypto';
import type { TaskSnapshot } from '../../protocol';

export function snapshotKey(s: Pick<TaskSnapshot, 'status' | 'statusMessage' | 'inputRequests'>): string {
  const keys = Object.keys(s.inputRequests ?? {}).sort();
  return createHash('sha256')
    .update(JSON.stringify([s.status, s.statusMessage ?? null, keys]))
    .digest('hex');
}
