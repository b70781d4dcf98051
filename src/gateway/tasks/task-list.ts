/**
 * The caller's own tasks in a project, newest first: the 2025-era `tasks/list` (the 2026 Tasks extension
 * has no list). The store keeps task ids only as hashes, so a task is listed only while its id is kept
 * with its payloads (tasks started by 2025-era clients, payload retention): a client can only be shown
 * ids it was given, and never longer than any other payload of the task.
 */
import { ProtocolError } from '../../protocol';
import { principalId } from '../../store/control-plane/types';
import { decodeTaskCursor, encodeTaskCursor } from '../../store/tasks/task-listing';
import type { RequestContext, Result } from '../context';
import { createTaskResult } from '../responses/responses';

const PAGE = 50;

export async function listCallerTasks(ctx: RequestContext, cursor: unknown): Promise<Result> {
  const { call, deps } = ctx;
  if (cursor !== undefined && typeof cursor !== 'string') {
    throw new ProtocolError('InvalidParams', 'params.cursor must be a string');
  }
  const after = cursor === undefined ? undefined : decodeTaskCursor(cursor);
  if (cursor !== undefined && !after) throw new ProtocolError('InvalidParams', 'Invalid cursor');
  const rows = await deps.store.listProjectTasks({
    project: call.project.id,
    group: 'all',
    caller: principalId(call.principal),
    ...(after && { after }),
    limit: PAGE + 1,
  });
  const page = rows.slice(0, PAGE);
  const tasks: Result[] = [];
  for (const row of page) {
    const taskId = await deps.payloads.firstOf<string>(row.taskKey, 'task_id');
    const record = taskId === undefined ? undefined : await deps.store.getTask(row.taskKey);
    if (taskId !== undefined && record)
      tasks.push(createTaskResult(taskId, record.snapshot, deps.serverInfo));
  }
  const last = page.at(-1);
  return {
    tasks,
    ...(rows.length > PAGE && last && { nextCursor: encodeTaskCursor(last) }),
  };
}
