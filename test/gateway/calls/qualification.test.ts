import type { DiscoverResult } from '../../../src/protocol';
import { PROTOCOL_VERSION, TASKS_EXTENSION } from '../../../src/protocol';
import type { QualificationInput } from '../../../src/gateway/calls/qualification';
import { declaresTasks, qualifyForTaskPath } from '../../../src/gateway/calls/qualification';

function upstream(overrides: Partial<DiscoverResult> = {}): DiscoverResult {
  return {
    resultType: 'complete',
    supportedVersions: [PROTOCOL_VERSION],
    capabilities: { tools: {}, extensions: { [TASKS_EXTENSION]: {} } },
    ttlMs: 60_000,
    cacheScope: 'public',
    ...overrides,
  };
}

function allOn(): QualificationInput {
  return {
    clientCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
    protocolVersion: PROTOCOL_VERSION,
    projectTasksEnabled: true,
    profileSupportsTasks: true,
    upstreamDiscover: upstream(),
  };
}

describe('qualifyForTaskPath', () => {
  it('takes the task path when every condition holds', () => {
    expect(qualifyForTaskPath(allOn())).toEqual({ taskPath: true });
  });

  it.each<[string, Partial<QualificationInput>, string]>([
    ['client capabilities without extensions', { clientCapabilities: {} }, 'client did not declare Tasks'],
    [
      'client declares other extensions only',
      { clientCapabilities: { extensions: { 'com.example/ext': {} } } },
      'client did not declare Tasks',
    ],
    [
      'client declares only the legacy 2025 tasks capability',
      { clientCapabilities: { tasks: { requests: {} } } },
      'client did not declare Tasks',
    ],
    ['another protocol version', { protocolVersion: '2025-11-25' }, 'protocol version'],
    ['project gate off', { projectTasksEnabled: false }, 'project Tasks gate is off'],
    ['tool profile without Tasks', { profileSupportsTasks: false }, 'tool profile does not support Tasks'],
    [
      'upstream speaks only an older version',
      { upstreamDiscover: upstream({ supportedVersions: ['2025-11-25'] }) },
      'upstream does not speak 2026-07-28',
    ],
    [
      'upstream advertises no extensions',
      { upstreamDiscover: upstream({ capabilities: { tools: {} } }) },
      'upstream does not advertise Tasks',
    ],
    [
      'upstream advertises only the legacy capabilities.tasks slot',
      {
        upstreamDiscover: upstream({ capabilities: { tools: {}, tasks: { requests: {} }, extensions: {} } }),
      },
      'upstream does not advertise Tasks',
    ],
  ])('takes the ordinary path when %s', (_label, change, reason) => {
    expect(qualifyForTaskPath({ ...allOn(), ...change })).toEqual({ taskPath: false, reason });
  });

  it('reports the first failing condition when several fail', () => {
    expect(
      qualifyForTaskPath({
        ...allOn(),
        projectTasksEnabled: false,
        upstreamDiscover: upstream({ capabilities: {} }),
      }),
    ).toEqual({ taskPath: false, reason: 'project Tasks gate is off' });
  });
});

describe('declaresTasks', () => {
  it('is true for an empty settings object under the Tasks extension id', () => {
    expect(declaresTasks({ extensions: { [TASKS_EXTENSION]: {} } })).toBe(true);
  });

  it('is false without it', () => {
    expect(declaresTasks({})).toBe(false);
    expect(declaresTasks({ extensions: {} })).toBe(false);
    expect(declaresTasks({ experimental: { [TASKS_EXTENSION]: {} } })).toBe(false);
  });
});
