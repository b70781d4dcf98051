import {
  FORWARDED_FOR_2025,
  LIST_METHODS,
  MCP_METHODS,
  METHOD,
  MODERN_METHODS,
  MULTI_ROUND_TRIP_METHODS,
  REMOVED_METHODS,
  UPSTREAM_METHODS,
  capabilityFor,
  isGatewayMethod,
  isKnownMethod,
} from '../../src/protocol';

describe('the table of MCP methods', () => {
  it('gives a 2026 client every method but the removed ones, and the removed ones to no 2026 client', () => {
    for (const method of Object.keys(MCP_METHODS)) {
      expect(MODERN_METHODS.has(method)).toBe(!REMOVED_METHODS.has(method));
    }
    for (const removed of [
      'initialize',
      'ping',
      'logging/setLevel',
      'resources/subscribe',
      'tasks/list',
      'tasks/result',
    ]) {
      expect(REMOVED_METHODS.has(removed)).toBe(true);
      expect(isGatewayMethod(removed)).toBe(false);
    }
  });

  it('dispatches the task and core methods in the gateway and listen streams in the endpoint', () => {
    for (const method of Object.values(METHOD)) expect(isGatewayMethod(method)).toBe(true);
    expect(isGatewayMethod('subscriptions/listen')).toBe(false);
    expect(MODERN_METHODS.has('subscriptions/listen')).toBe(true);
  });

  it('forwards to 2025 clients only what needs no translation (tools/call and tasks go through the adapter)', () => {
    expect(FORWARDED_FOR_2025.has('tools/list')).toBe(true);
    expect(FORWARDED_FOR_2025.has('completion/complete')).toBe(true);
    expect(FORWARDED_FOR_2025.has('tools/call')).toBe(false);
    expect(FORWARDED_FOR_2025.has('tasks/get')).toBe(false);
  });

  it('names the capability, the list methods, the multi-round-trip methods and the upstream methods', () => {
    expect(capabilityFor('prompts/get')).toBe('prompts');
    expect(capabilityFor('resources/templates/list')).toBe('resources');
    expect(capabilityFor('completion/complete')).toBe('completions');
    expect(capabilityFor('tools/call')).toBeUndefined();
    expect([...LIST_METHODS].sort()).toEqual([
      'prompts/list',
      'resources/list',
      'resources/templates/list',
      'tools/list',
    ]);
    expect([...MULTI_ROUND_TRIP_METHODS].sort()).toEqual(['prompts/get', 'resources/read', 'tools/call']);
    expect(UPSTREAM_METHODS.has('subscriptions/listen')).toBe(true);
    expect(UPSTREAM_METHODS.has('initialize')).toBe(false);
  });

  it('knows nothing a client invents, and nothing inherited from Object', () => {
    expect(isKnownMethod('tools/explode')).toBe(false);
    expect(isKnownMethod('constructor')).toBe(false);
    expect(isGatewayMethod('toString')).toBe(false);
    expect(capabilityFor('__proto__')).toBeUndefined();
  });
});
