import { META, PROTOCOL_VERSION, TASKS_EXTENSION } from '../../src/protocol';
import { relayableMeta, taskPathCapabilities, upstreamMeta } from '../../src/upstream/meta';

const gatewayInfo = { name: 'taskrouter', version: '0.1.0' };

describe('relayableMeta', () => {
  const relayed = {
    traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    tracestate: 'vendor=1',
    baggage: 'user=alice',
    progressToken: 'p-1',
    [META.logLevel]: 'debug',
    'com.example/x': { nested: [1, 2] },
    'io.modelcontextprotocol/futureKey': { unknown: true },
  };

  it('drops exactly the hop keys and relays every other key unchanged', () => {
    const out = relayableMeta({
      ...relayed,
      [META.protocolVersion]: PROTOCOL_VERSION,
      [META.clientCapabilities]: { extensions: { [TASKS_EXTENSION]: {} } },
      [META.clientInfo]: { name: 'client', version: '1' },
      [META.serverInfo]: { name: 'spoofed', version: '1' },
      [META.subscriptionId]: 'sub-1',
    });
    expect(out).toEqual(relayed);
    expect(out['com.example/x']).toBe(relayed['com.example/x']);
  });

  it('keeps trace context and vendor keys when there is nothing to drop', () => {
    expect(relayableMeta({ traceparent: 't', 'com.example/x': 1 })).toEqual({
      traceparent: 't',
      'com.example/x': 1,
    });
  });

  it('returns an empty object for missing _meta', () => {
    expect(relayableMeta(undefined)).toEqual({});
    expect(relayableMeta({})).toEqual({});
  });

  it('never relays task ids a client names: they are its gateway task ids, secrets the upstream cannot use', () => {
    const meta = {
      [META.relatedTaskIds]: ['trt_secret-one'],
      [META.legacyRelatedTask]: { taskId: 'trt_secret-two' },
      'com.example/kept': 1,
    };
    expect(relayableMeta(meta)).toEqual({ 'com.example/kept': 1 });
  });

  it('does not mutate its input', () => {
    const input = { [META.clientInfo]: { name: 'c', version: '1' }, traceparent: 't' };
    relayableMeta(input);
    expect(Object.keys(input)).toEqual([META.clientInfo, 'traceparent']);
  });
});

describe('upstreamMeta', () => {
  it('stamps version, capabilities and the gateway as clientInfo on top of the relayed keys', () => {
    const capabilities = { elicitation: { form: {} } };
    const out = upstreamMeta({
      relayedMeta: { traceparent: 't', 'com.example/x': 1 },
      protocolVersion: PROTOCOL_VERSION,
      capabilities,
      gatewayInfo,
    });
    expect(out).toEqual({
      traceparent: 't',
      'com.example/x': 1,
      [META.protocolVersion]: PROTOCOL_VERSION,
      [META.clientCapabilities]: capabilities,
      [META.clientInfo]: gatewayInfo,
    });
  });

  it('overrides reserved keys smuggled into the relayed meta', () => {
    const out = upstreamMeta({
      relayedMeta: {
        [META.protocolVersion]: '1900-01-01',
        [META.clientCapabilities]: { sampling: {} },
        [META.clientInfo]: { name: 'client', version: '1' },
      },
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      gatewayInfo,
    });
    expect(out[META.protocolVersion]).toBe(PROTOCOL_VERSION);
    expect(out[META.clientCapabilities]).toEqual({});
    expect(out[META.clientInfo]).toEqual(gatewayInfo);
  });
});

describe('taskPathCapabilities', () => {
  it('declares Tasks only when form elicitation cannot be relayed', () => {
    expect(taskPathCapabilities(false)).toEqual({ extensions: { [TASKS_EXTENSION]: {} } });
  });

  it('declares Tasks and form elicitation (not url) when it can', () => {
    expect(taskPathCapabilities(true)).toEqual({
      extensions: { [TASKS_EXTENSION]: {} },
      elicitation: { form: {} },
    });
  });

  it('never declares sampling or roots', () => {
    const caps = taskPathCapabilities(true);
    expect(caps).not.toHaveProperty('sampling');
    expect(caps).not.toHaveProperty('roots');
  });
});
