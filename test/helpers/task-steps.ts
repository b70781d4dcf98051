/**
 * Steps of the task lifecycle that the gateway must take the same way however a task is watched (by watch
 * activities or by the watch hub): test/integration/task-lifecycle, watch-hub and durability run them on
 * their own gateways.
 */
import type { temporal } from '@temporalio/proto';
import { taskKeyOf } from '../../src/store/tasks/task-store';
import { taskWorkflowId } from '../../src/workflows/messages';
import type { TestGateway } from './gateway';
import { TASKS_AND_FORM_CAPS } from './mcp-client';

/** Calls `tool` (declaring `capabilities` when given), expects a task and returns its id. */
export async function createTask(
  gw: TestGateway,
  tool: string,
  args: Record<string, unknown>,
  capabilities?: Record<string, unknown>,
): Promise<string> {
  const reply = await gw.client.callTool(tool, args, capabilities ? { capabilities } : {});
  expect(reply.status).toBe(200);
  const result = reply.body.result!;
  expect(result.resultType).toBe('task');
  return String(result.taskId);
}

/** confirm_delete asks for its `confirm` input; tasks/update accepts it and the task completes confirmed. */
export async function confirmDeleteCompletes(gw: TestGateway, filename: string): Promise<void> {
  const taskId = await createTask(gw, 'confirm_delete', { filename }, TASKS_AND_FORM_CAPS);
  const asking = await gw.client.waitForTask(taskId, (s) => s === 'input_required');
  const requests = asking.inputRequests as Record<string, { method: string }>;
  expect(Object.keys(requests)).toEqual(['confirm']);
  expect(requests.confirm?.method).toBe('elicitation/create');

  const ack = await gw.client.request(
    'tasks/update',
    { taskId, inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } },
    { capabilities: TASKS_AND_FORM_CAPS },
  );
  expect(ack.body.result).toMatchObject({ resultType: 'complete' });
  const done = await gw.client.waitForTask(taskId);
  expect(done.status).toBe('completed');
  expect(JSON.stringify(done.result)).toContain('Confirmed');
}

/** tasks/cancel is acknowledged and the task ends cancelled, the upstream asked to cancel it once. */
export async function cancelEndsTask(gw: TestGateway, taskId: string): Promise<void> {
  const cancelsBefore = gw.upstream.stats.tasksCancel;
  const ack = await gw.client.request('tasks/cancel', { taskId });
  expect(ack.status).toBe(200);
  expect(ack.body.result).toMatchObject({ resultType: 'complete' });
  const done = await gw.client.waitForTask(taskId);
  expect(done.status).toBe('cancelled');
  expect(gw.upstream.stats.tasksCancel).toBe(cancelsBefore + 1);
}

/**
 * A slow_compute of `seconds` labelled `label` completes with its result within a minute (long enough on
 * a gateway that makes it continue as new); the task's id.
 */
export async function longTaskCompletes(gw: TestGateway, seconds: number, label: string): Promise<string> {
  const created = await gw.client.callTool('slow_compute', { seconds, label });
  const taskId = String(created.body.result?.taskId);
  const done = await gw.client.waitForTask(taskId, undefined, 60_000);
  expect(done).toMatchObject({ status: 'completed' });
  expect(JSON.stringify(done.result)).toContain(label);
  return taskId;
}

/**
 * The history of an ended task's workflow (its last run), once that workflow has closed. A client can read
 * an upstream task's end before the workflow has absorbed it (the poll that sees a completion records it
 * at once: docs/decisions.md, "The watch hub"), so a history fetched right after tasks/get says
 * `completed` may still be missing its last events.
 */
export async function endedTaskHistory(
  gw: TestGateway,
  taskId: string,
): Promise<temporal.api.history.v1.IHistory> {
  const client = await gw.temporalClient();
  const handle = client.workflow.getHandle(taskWorkflowId(taskKeyOf(taskId)));
  await handle.result(); // follows the runs it continued as new into
  return handle.fetchHistory();
}
