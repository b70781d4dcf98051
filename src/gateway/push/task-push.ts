/**
 * Task status pushed on `subscriptions/listen` (`notifications/tasks`): which of the task ids a listen
 * request names the caller may follow (the same ownership check as `tasks/get`; others are left out of
 * the acknowledgement, indistinguishable from unknown ids), and the DetailedTask a notification carries.
 */
import { ProtocolError } from '../../protocol';
import { taskKeyOf } from '../../store/tasks/task-store';
import type { RequestContext, Result } from '../context';
import { getTaskResult } from '../responses/responses';
import { currentSnapshot, ownedTask } from '../tasks/task-methods';

/** Task ids one listen request may follow. */
export const MAX_TASKS_PER_LISTEN = 100;

export interface FollowedTask {
  taskId: string;
  taskKey: string;
}

/** The caller's own tasks among `taskIds`; asking at all needs the Tasks extension (`-32021`). */
export async function followableTasks(
  ctx: RequestContext,
  taskIds: readonly string[],
): Promise<FollowedTask[]> {
  const followed: FollowedTask[] = [];
  for (const taskId of taskIds.slice(0, MAX_TASKS_PER_LISTEN)) {
    try {
      const task = await ownedTask(ctx, taskKeyOf(taskId));
      followed.push({ taskId, taskKey: task.taskKey });
    } catch (err) {
      const refused = err instanceof ProtocolError && err.kind !== 'MissingRequiredClientCapability';
      if (!refused) throw err;
    }
  }
  return followed;
}

/**
 * The task as `tasks/get` would answer now, without `resultType` (a notification's params); undefined
 * once the caller may no longer follow it (access or the upstream authorization withdrawn, or gone).
 */
export async function pushedTask(ctx: RequestContext, task: FollowedTask): Promise<Result | undefined> {
  let record;
  try {
    record = await ownedTask(ctx, task.taskKey);
  } catch (err) {
    if (err instanceof ProtocolError) return undefined;
    throw err;
  }
  const { resultType: _resultType, ...detail } = getTaskResult(
    task.taskId,
    currentSnapshot(record),
    ctx.deps.serverInfo,
  );
  return detail;
}
