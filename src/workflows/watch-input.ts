/**
 * What a task's watch polls with, from the workflow's input and its state: the task workflow builds it
 * for each watch (activity or hub enlistment), and the API builds the first one when it enlists a task
 * it created itself (src/temporal/first-call.ts), so both describe the task the same way. No I/O.
 */
import type { UpstreamTaskRef, WatchUpstreamTaskInput } from '../activities/types';
import type { TaskWorkflowInput } from './messages';
import { accessOf } from './published-status';
import type { TaskState } from './task-state';

export function refOf(input: TaskWorkflowInput, state: TaskState): UpstreamTaskRef {
  return {
    ...accessOf(input),
    upstreamTaskId: state.s.upstreamTaskId,
    protocolVersion: input.call.protocolVersion,
  };
}

/** What one watch (activity or hub) polls with: the task, the last observation's key, its open input. */
export function watchInputOf(
  state: TaskState,
  ref: UpstreamTaskRef,
  input: TaskWorkflowInput,
): WatchUpstreamTaskInput {
  const o = state.s.observed;
  const open = Object.keys(state.present().inputs ?? {});
  return {
    ...ref,
    taskKey: input.taskKey,
    projectSlug: input.projectSlug,
    knownKey: o.key,
    pollIntervalMs: o.pollIntervalMs ?? 1000,
    ...(o.status === 'input_required' &&
      o.detailRef && { openInput: { detailRef: o.detailRef, keys: open } }),
  };
}
