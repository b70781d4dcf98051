/**
 * A running task's stored detail is refreshed from the upstream before payload retention would remove
 * it (docs/retention.md): the watch reports an unchanged observation as changed once the stored copy is
 * `detailRefreshMs` old, so the workflow stores it again; a younger copy is left alone.
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
  pollIntervalMs: 50,
};

function watchWith(storedAt: string) {
  const stored: unknown[] = [];
  const activities = createActivities({
    upstream: { send: async () => ({ kind: 'result', result: { ...task } }) } as unknown as UpstreamClient,
    store: {
      detailStoredAt: async () => storedAt,
      watchStarted: async () => {},
      watchDue: async () => {},
    } as never,
    payloads: {
      put: async (_key: string, _kind: string, value: unknown) => {
        stored.push(value);
        return `pl_${stored.length}`;
      },
    } as never,
    resolveUpstream: async () => ({ alias: 'example', url: 'http://upstream.invalid/mcp' }),
    gatewayInfo: { name: 'taskrouter-test', version: '1.0.0' },
    settings: {
      minPollIntervalMs: 50,
      maxPollIntervalMs: 60_000,
      maxWatchMs: 500,
      pollFailureBudget: 3,
      detailRefreshMs: 60_000,
    },
    logger: pino({ level: 'silent' }),
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
    pollIntervalMs: 50,
  };
  return { stored, result: new MockActivityEnvironment().run(activities.watchUpstreamTask, input) };
}

test('a stored detail older than detailRefreshMs is stored again, though nothing changed', async () => {
  const { stored, result } = watchWith(new Date(Date.now() - 61_000).toISOString());
  await expect(result).resolves.toMatchObject({
    kind: 'changed',
    observation: { status: 'working', detailRef: 'pl_1' },
  });
  expect(stored).toEqual([expect.objectContaining({ statusMessage: 'busy' })]);
});

test('a younger stored detail is left alone: the watch runs its time and reports nothing', async () => {
  const { stored, result } = watchWith(new Date(Date.now() - 1_000).toISOString());
  await expect(result).resolves.toEqual({ kind: 'unchanged' });
  expect(stored).toEqual([]);
});
