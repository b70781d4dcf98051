/** The floor workflow's one activity (bench/floor-workflow.ts): the task-aware call, as the gateway makes it. */
import type { Dispatcher } from 'undici';
import { McpHttpClient } from './support';

export interface FloorActivities {
  callUpstream(args: Record<string, unknown>): Promise<Record<string, unknown>>;
}

export function createFloorActivities(upstreamUrl: string, dispatcher: Dispatcher): FloorActivities {
  const client = new McpHttpClient(upstreamUrl, dispatcher);
  return {
    async callUpstream(args) {
      const reply = await client.callTool('slow_compute', args);
      if (reply.result?.resultType !== 'task') {
        throw new Error(`HTTP ${reply.status}: ${JSON.stringify(reply.error ?? reply.result).slice(0, 200)}`);
      }
      return reply.result;
    },
  };
}
