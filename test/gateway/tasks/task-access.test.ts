/** The dashboard's roles table as one pure function: every role × caller × state combination. */
import type { TaskAccessInput } from '../../../src/gateway/tasks/task-access';
import { taskAccess } from '../../../src/gateway/tasks/task-access';

const base: TaskAccessInput = {
  role: 'team',
  viewerUserId: 'u1',
  caller: { kind: 'user', id: 'u1' },
  status: 'working',
  authorizationValid: true,
  payloadExpired: false,
};

test.each([
  // role, caller, status, authorization valid, payload expired → payload (reason), cancel, answer
  ['team', { kind: 'user', id: 'u1' }, 'working', true, false, 'visible', true, false],
  ['team', { kind: 'user', id: 'u1' }, 'input_required', true, false, 'visible', true, true],
  ['member', { kind: 'user', id: 'u1' }, 'input_required', true, false, 'visible', true, true],
  ['team', { kind: 'user', id: 'u2' }, 'input_required', true, false, 'not_caller', false, false],
  ['member', { kind: 'user', id: 'u2' }, 'working', true, false, 'not_caller', false, false],
  ['team', { kind: 'api_key', id: 'k1' }, 'input_required', true, false, 'api_key', false, false],
  ['member', { kind: 'anonymous', id: 'anonymous' }, 'working', true, false, 'anonymous', false, false],
  ['team', { kind: 'user', id: 'u1' }, 'input_required', false, false, 'authorization_invalid', false, false],
  ['team', { kind: 'user', id: 'u1' }, 'completed', true, true, 'expired', false, false],
  ['team', { kind: 'user', id: 'u1' }, 'completed', true, false, 'visible', false, false],
  ['member', { kind: 'user', id: 'u1' }, 'cancelled', false, true, 'authorization_invalid', false, false],
] as const)(
  '%s viewing a task of %j (%s, authorization %s, expired %s): payload %s, cancel %s, answer %s',
  (role, caller, status, authorizationValid, payloadExpired, payload, cancel, answer) => {
    const access = taskAccess({ ...base, role, caller, status, authorizationValid, payloadExpired });
    expect(access.payload.visible ? 'visible' : access.payload.reason).toBe(payload);
    expect(access.cancel).toBe(cancel);
    expect(access.answer).toBe(answer);
    // Team-level rights depend on the role alone, never on who started the task.
    expect(access.assign).toBe(role === 'team');
    expect(access.workflowLink).toBe(role === 'team');
    if (!access.payload.visible) expect(access.payload.message.length).toBeGreaterThan(20);
  },
);
