/**
 * The listen feed's bookkeeping, as a unit over a real HTTP response: a change read from the store whose
 * push fails (the store or Temporal busy) is pushed on a later round, not lost with the cursor that moved
 * past it. The gateway and the store are stand-ins here; test/integration/push.test.ts runs the real ones.
 */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpGateway } from '../../src/gateway/gateway';
import { ResponseStream } from '../../src/api/mcp/response-stream';
import { Subscriptions } from '../../src/api/mcp/subscriptions';
import type { TaskStore } from '../../src/store/task-store';

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
    latestEventId: async () => 7,
    statusEventsAfter: async (after: number) => {
      const fresh = events.filter((e) => e.id > after);
      events = [];
      return fresh;
    },
  } as unknown as TaskStore;
  const subscriptions = new Subscriptions({ gateway, store, pollEveryMs: 20 });

  const server = createServer((req, res) => {
    const stream = new ResponseStream(res, true);
    const call = { params: { notifications: { taskIds: ['t1'] } } } as never;
    void subscriptions.listen(call, 1, stream, res, 'caller');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  try {
    const messages = await new Promise<Array<{ method?: string; params?: { status?: string } }>>(
      (resolve, reject) => {
        const seen: Array<{ method?: string; params?: { status?: string } }> = [];
        request({ port, method: 'POST' }, (res) => {
          let buffer = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buffer += chunk;
            for (const line of buffer.split('\n')) {
              if (line.startsWith('data: ') && line.length > 6) seen.push(JSON.parse(line.slice(6)));
            }
            buffer = buffer.slice(buffer.lastIndexOf('\n') + 1);
            if (seen.some((m) => m.method === 'notifications/tasks')) {
              res.destroy();
              resolve(seen);
            }
          });
        })
          .on('error', reject)
          .end();
      },
    );
    expect(messages.map((m) => m.method)).toEqual([
      'notifications/subscriptions/acknowledged',
      'notifications/tasks',
    ]);
    expect(messages[1]?.params?.status).toBe('completed');
    expect(attempts).toBe(2);
  } finally {
    subscriptions.closeAll();
    await new Promise((r) => server.close(r));
  }
});
