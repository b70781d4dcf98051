/**
 * A task snapshot split into what the workflow holds (the observation: metadata, a hash of what decides
 * a change, the detail's payload id) and what it must not carry (the detail: status message, input
 * requests, result, error, re-published metadata), stored as a payload. Used by the activities and by
 * the API when it records a task its own first call created (src/gateway/first-call.ts). Pure.
 */
import type { TaskSnapshot } from '../protocol';
import { snapshotKey } from '../store/tasks/snapshot-key';
import type { TaskObservation } from '../workflows/messages';

export type TaskDetail = Pick<
  TaskSnapshot,
  'statusMessage' | 'inputRequests' | 'result' | 'error' | 'meta' | 'extensions'
>;

/** The detail of a snapshot: what is stored as its payload (kind `detail`). */
export function taskDetailOf(snapshot: TaskSnapshot): TaskDetail {
  const { statusMessage, inputRequests, result, error, meta, extensions } = snapshot;
  return { statusMessage, inputRequests, result, error, meta, extensions };
}

/** The workflow's observation of a snapshot whose detail is stored as payload `detailRef`. */
export function observationOf(snapshot: TaskSnapshot, detailRef: string): TaskObservation {
  const {
    statusMessage: _m,
    inputRequests,
    result: _r,
    error: _e,
    meta: _x,
    extensions: _y,
    ...fields
  } = snapshot;
  const inputs =
    snapshot.status === 'input_required'
      ? Object.fromEntries(
          Object.entries(inputRequests ?? {}).map(([k, r]) => {
            const mode = r.params?.mode;
            return [k, { method: r.method, ...(typeof mode === 'string' && { mode }) }];
          }),
        )
      : undefined;
  return { ...fields, key: snapshotKey(snapshot), detailRef, ...(inputs && { inputs }) };
}
