/**
 * The listen feed's bookkeeping, as a unit over a real HTTP response: a change read from the store whose
 * push fails (the store or Temporal busy) is pushed on a later round, not lost with the cursor that moved
 * past it. The gateway and the store are stand-ins here; test/integration/push.test.ts runs the real ones.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpGateway } from '../../src/gateway/gateway';
import { ResponseStream } from '../../src/api/mcp/response-stream';
import { Subscriptions } from '../../src/api/mcp/subscriptions';
import type { TaskStore } from '../../src/store/tasks/task-store';
import { readSseMessages } from '../../src/upstream/http';

test('a push that failed is tried again on the next round', async () => {
  let events = [{ id: 8, taskKey: 'k1' }];
  let attempts = 0;
  const gateway = {
    followableTasks: async () => [{ taskId: 't1', taskKey: 'k1' }],
    pushedTask: async () => {
      attempts += 1;
      if (attempts === 1) throw new Error('store busy');
      return { taskId: 't1', status: 'completed' };
    },
  } as unknown as McpGateway;
  const store = {
    statusFeed: () => ({
      start: async () => {},
      read: async () => {
        const fresh = events;
        events = [];
        return fresh;
      },
    }),
  } as unknown as TaskStore;
  const subscriptions = new Subscriptions({ gateway, store, pollEveryMs: 20 });

  const server = createServer((req, res) => {
    const stream = new ResponseStream(res, true);
    const call = {
      project: { id: 'p1', slug: 'p' },
      params: { notifications: { taskIds: ['t1'] } },
    } as never;
    void subscriptions.listen(call, 1, stream, res, 'caller');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  try {
    const res = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST' });
    const messages: Array<Record<string, unknown>> = [];
    await readSseMessages(res.body as unknown as AsyncIterable<Buffer>, (m) => {
      messages.push(m);
      return m.method === 'notifications/tasks';
    });
    expect(messages.map((m) => m.method)).toEqual([
      'notifications/subscriptions/acknowledged',
      'notifications/tasks',
    ]);
    expect(messages[1]?.params).toMatchObject({ status: 'completed' });
    expect(attempts).toBe(2);
  } finally {
    subscriptions.closeAll();
    await new Promise((r) => server.close(r));
  }
});
