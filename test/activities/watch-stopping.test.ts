/**
 * A watch activity on a worker that starts to shut down ends as `unchanged` within about a second, so
 * the workflow schedules its next watch elsewhere instead of the worker waiting out its grace time.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import pino from 'pino';
import { createActivities } from '../../src/activities';
import type { WatchUpstreamTaskInput } from '../../src/activities/types';
import { PROTOCOL_VERSION } from '../../src/protocol';
import { snapshotKey } from '../../src/store/tasks/snapshot-key';
import type { UpstreamClient } from '../../src/upstream/client';

const task = {
  taskId: 'upstream-task',
  status: 'working',
  statusMessage: 'busy',
  createdAt: new Date().toISOString(),
  lastUpdatedAt: new Date().toISOString(),
  ttlMs: null,
  pollIntervalMs: 200,
};

test('a watch returns unchanged once the worker is stopping', async () => {
  let polls = 0;
  const upstream = {
    send: async () => {
      polls++;
      return { kind: 'result', result: { ...task } };
    },
  } as unknown as UpstreamClient;
  const stopping = new AbortController();
  const activities = createActivities({
    upstream,
    store: { watchStarted: async () => {}, watchDue: async () => {} } as never,
    payloads: {} as never,
    resolveUpstream: async () => ({ alias: 'example', url: 'http://upstream.invalid/mcp' }),
    gatewayInfo: { name: 'taskrouter-test', version: '1.0.0' },
    settings: { minPollIntervalMs: 50, maxPollIntervalMs: 60_000, maxWatchMs: 600_000, pollFailureBudget: 3 },
    logger: pino({ level: 'silent' }),
    stopping: stopping.signal,
  });
  const input: WatchUpstreamTaskInput = {
    project: 'p1',
    upstream: 'example',
    principal: { kind: 'anonymous' },
    authorizationId: null,
    upstreamTaskId: task.taskId,
    protocolVersion: PROTOCOL_VERSION,
    taskKey: 'task-key',
    knownKey: snapshotKey({ status: 'working', statusMessage: 'busy' }),
    pollIntervalMs: 200,
  };
  const watching = new MockActivityEnvironment().run(activities.watchUpstreamTask, input);
  while (polls < 3) await new Promise((r) => setTimeout(r, 20));
  stopping.abort();
  await expect(watching).resolves.toEqual({ kind: 'unchanged' });
});
