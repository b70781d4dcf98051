/**
 * What the watch-activity unit tests share: the activities built around a stub upstream that answers every
 * tasks/get with `answer`, and the watch input of an anonymous caller's task `task-key` in project p1.
 */
import pino from 'pino';
import { createActivities, type ActivityDeps } from '../../src/activities';
import type { WatchUpstreamTaskInput } from '../../src/activities/types';
import { PROTOCOL_VERSION } from '../../src/protocol';
import type { UpstreamClient } from '../../src/upstream/client';

/** An upstream task in `working` with status message `busy`, as tasks/get returns it. */
export function workingTask(pollIntervalMs: number) {
  return {
    taskId: 'upstream-task',
    status: 'working',
    statusMessage: 'busy',
    createdAt: new Date().toISOString(),
    lastUpdatedAt: new Date().toISOString(),
    ttlMs: null,
    pollIntervalMs,
  };
}

type GivenDeps = Pick<ActivityDeps, 'store' | 'payloads' | 'settings'> & Partial<ActivityDeps>;

/** Activity deps over a stub upstream whose every answer is `answer()` as a result; the rest as given. */
export function watchDeps(answer: () => unknown, deps: GivenDeps): ActivityDeps {
  return {
    upstream: { send: async () => ({ kind: 'result', result: answer() }) } as unknown as UpstreamClient,
    resolveUpstream: async () => ({ alias: 'example', url: 'http://upstream.invalid/mcp' }),
    gatewayInfo: { name: 'taskrouter-test', version: '1.0.0' },
    logger: pino({ level: 'silent' }),
    ...deps,
  } as ActivityDeps;
}

/** createActivities over watchDeps. */
export function watchActivities(answer: () => unknown, deps: GivenDeps) {
  return createActivities(watchDeps(answer, deps));
}

/** The watch of upstream task `upstreamTaskId` behind task `task-key`, the caller having seen `knownKey`. */
export function watchInput(
  upstreamTaskId: string,
  knownKey: string,
  pollIntervalMs: number,
): WatchUpstreamTaskInput {
  return {
    project: 'p1',
    upstream: 'example',
    principal: { kind: 'anonymous' },
    authorizationId: null,
    upstreamTaskId,
    protocolVersion: PROTOCOL_VERSION,
    taskKey: 'task-key',
    knownKey,
    pollIntervalMs,
  };
}
