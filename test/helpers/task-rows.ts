/**
 * A task row as the gateway inserts it when a call becomes a task (TaskStore.insertTask), for the store
 * tests and the dashboard bench that seed tasks directly.
 */
import type { TaskSnapshot } from '../../src/protocol';
import type { NewTask } from '../../src/store/tasks/task-types';

/**
 * Task `taskKey`: an anonymous caller's slow_compute call to upstream `example` of project `p`, its
 * workflow id derived from the key, `working` since `at` without a TTL; `snapshot` and `row` override any
 * of that.
 */
export function newTask(
  taskKey: string,
  at: string,
  snapshot: Partial<TaskSnapshot> = {},
  row: Partial<Omit<NewTask, 'taskKey' | 'snapshot'>> = {},
): NewTask {
  return {
    taskKey,
    workflowId: `task-${taskKey.slice(0, 32)}`,
    project: 'p',
    caller: { kind: 'anonymous', id: 'anonymous' },
    upstream: 'example',
    tool: 'slow_compute',
    authorizationId: null,
    ...row,
    snapshot: {
      status: 'working',
      createdAt: at,
      lastUpdatedAt: at,
      ttlMs: null,
      ...snapshot,
    } as TaskSnapshot,
  };
}
