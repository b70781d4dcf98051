/**
 * bench:tasks, part 6 (see bench/tasks.ts): the Temporal history a short and a long task leave, and the
 * upstream polls each took (each has an upstream of its own, so its poll count is exact).
 */
import type { Client } from '@temporalio/client';
import { taskKeyOf } from '../src/store/tasks/task-store';
import { taskWorkflowId } from '../src/workflows/messages';
import type { UpstreamProcess } from './processes';
import type { McpHttpClient } from './support';
import { createTask, effectivePollMs, historyOf } from './task-support';

export interface HistoryTask {
  seconds: number;
  workflowId: string;
  upstream: UpstreamProcess;
}

export async function startHistoryTask(
  client: McpHttpClient,
  alias: string,
  upstream: UpstreamProcess,
  seconds: number,
): Promise<HistoryTask> {
  const c = await createTask(client, `${alias}.slow_compute`, { seconds, label: `history-${seconds}s` });
  return { seconds, workflowId: taskWorkflowId(taskKeyOf(c.taskId)), upstream };
}

export async function finishHistoryTask(client: Client, t: HistoryTask, poll: number) {
  await client.withDeadline(Date.now() + t.seconds * 1000 + 120_000, () =>
    client.workflow.getHandle(t.workflowId).result(),
  );
  const history = await historyOf(client, t.workflowId);
  return {
    seconds: t.seconds,
    ...history,
    upstreamPolls: (await t.upstream.stats()).tasksGet,
    estimatedPolls: Math.floor((t.seconds * 1000) / effectivePollMs(poll)) + 1,
  };
}
