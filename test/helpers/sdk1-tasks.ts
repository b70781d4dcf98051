/** The SDK 1.x client's 2025-11-25 task stream (`experimental.tasks.callToolStream`), read as the tests do. */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

/**
 * Calls tool `name` through the task stream and reads it to its end (an `error` message is thrown): the
 * types of the messages in order, the task's statuses as created and reported, its id, its status when
 * created, and the result.
 */
export async function streamToolCall(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  options?: { task: { ttl: number } },
): Promise<{
  types: string[];
  statuses: string[];
  taskId: string;
  created: string;
  result: CallToolResult | undefined;
}> {
  const types: string[] = [];
  const statuses: string[] = [];
  let taskId = '';
  let created = '';
  let result: CallToolResult | undefined;
  for await (const m of client.experimental.tasks.callToolStream(
    { name, arguments: args },
    CallToolResultSchema,
    options,
  )) {
    types.push(m.type);
    if (m.type === 'taskCreated' || m.type === 'taskStatus') statuses.push(m.task.status);
    if (m.type === 'taskCreated') [taskId, created] = [m.task.taskId, m.task.status];
    if (m.type === 'result') result = m.result as CallToolResult;
    if (m.type === 'error') throw m.error;
  }
  return { types, statuses, taskId, created, result };
}
