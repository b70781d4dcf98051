import { ProtocolError, RelayedError } from '../../src/protocol';
import { fromUpstream, lacksAny } from '../../src/gateway/upstream-errors';

describe('lacksAny: does the client miss a capability the upstream requires?', () => {
  test.each([
    [{}, { sampling: {} }, true],
    [{ sampling: {} }, { sampling: {} }, false],
    [{ sampling: {} }, { sampling: { tools: {} } }, true],
    [{ elicitation: {} }, { elicitation: { form: {} } }, false],
    [{ elicitation: {} }, { elicitation: { url: {} } }, true],
    [{ elicitation: { url: {} } }, { elicitation: { form: {} } }, true],
    [
      { extensions: { 'io.modelcontextprotocol/tasks': {} } },
      { extensions: { 'io.modelcontextprotocol/tasks': {} } },
      false,
    ],
    [{ extensions: { 'com.example/x': {} } }, { extensions: { 'io.modelcontextprotocol/tasks': {} } }, true],
    [{}, { constructor: {} }, true],
    [{}, undefined, false],
    [{}, 'garbage', false],
  ])('%j vs required %j → %s', (declared, required, lacks) => {
    expect(lacksAny(declared, required)).toBe(lacks);
  });
});

describe('fromUpstream', () => {
  test('ordinary errors are relayed unchanged', () => {
    const err = fromUpstream('u', { code: -32602, message: 'bad', data: { x: 1 } }, {});
    expect(err).toBeInstanceOf(RelayedError);
    expect(err).toMatchObject({ code: -32602, message: 'bad', data: { x: 1 } });
  });

  test.each([-32020, -32022])('%i is the gateway’s request: -31011 naming the upstream', (code) => {
    const err = fromUpstream('u', { code, message: 'no' }, {});
    expect(err).toBeInstanceOf(ProtocolError);
    expect(err).toMatchObject({
      code: -31011,
      httpStatus: 502,
      data: { upstream: 'u', upstreamError: { code } },
    });
  });

  test('-32021: relayed when the client lacks the capability, -31011 when it declared it, or named none', () => {
    const error = {
      code: -32021,
      message: 'need sampling',
      data: { requiredCapabilities: { sampling: {} } },
    };
    expect(fromUpstream('u', error, {})).toBeInstanceOf(RelayedError);
    expect(fromUpstream('u', error, { sampling: {} })).toMatchObject({ code: -31011 });
    expect(fromUpstream('u', { code: -32021, message: 'vague' }, {})).toMatchObject({ code: -31011 });
  });
});
