/**
 * The example upstream's conformance fixtures over real HTTP, the MRTR tools: input requests answered by
 * a retry, several rounds with a request state, and only the request kinds the client declared.
 */
import type { Json } from './conformance-fixtures-client';
import { accept, errorOf, fixturesUpstream, resultOf, rpc } from './conformance-fixtures-client';

describe('example upstream conformance fixtures', () => {
  const fixture = fixturesUpstream();

  describe('MRTR tools', () => {
    it('elicitation: round 1 asks for user_name, the retry greets', async () => {
      const name = 'test_input_required_result_elicitation';
      const round1 = resultOf(await rpc(fixture.url, 'tools/call', { name }));
      expect(round1).toMatchObject({
        resultType: 'input_required',
        inputRequests: { user_name: { method: 'elicitation/create' } },
      });
      const round2 = resultOf(
        await rpc(fixture.url, 'tools/call', {
          name,
          inputResponses: { user_name: accept({ name: 'Alice' }) },
          requestState: round1.requestState,
        }),
      );
      expect(round2).toMatchObject({
        resultType: 'complete',
        content: [{ type: 'text', text: 'Hello, Alice!' }],
      });
    });

    it('sampling and roots answers are accepted by shape', async () => {
      const sampling = resultOf(
        await rpc(fixture.url, 'tools/call', {
          name: 'test_input_required_result_sampling',
          inputResponses: {
            capital_question: { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'm' },
          },
        }),
      );
      expect(sampling).toMatchObject({
        resultType: 'complete',
        content: [{ text: 'Sampling response: Paris' }],
      });
      const roots = resultOf(
        await rpc(fixture.url, 'tools/call', {
          name: 'test_input_required_result_list_roots',
          inputResponses: { client_roots: { roots: [{ uri: 'file:///r' }] } },
        }),
      );
      expect(roots).toMatchObject({ resultType: 'complete', content: [{ text: 'Client roots: file:///r' }] });
    });

    it('re-requests a missing key instead of failing', async () => {
      const result = resultOf(
        await rpc(fixture.url, 'tools/call', {
          name: 'test_input_required_result_elicitation',
          inputResponses: { wrong_key: accept({ data: 'x' }) },
        }),
      );
      expect(result).toMatchObject({ resultType: 'input_required', inputRequests: { user_name: {} } });
    });

    it('multi-round: step1, then step2 with a new requestState, then complete', async () => {
      const name = 'test_input_required_result_multi_round';
      const r1 = resultOf(await rpc(fixture.url, 'tools/call', { name }));
      expect(Object.keys(r1.inputRequests as Json)).toEqual(['step1']);
      const r2 = resultOf(
        await rpc(fixture.url, 'tools/call', {
          name,
          inputResponses: { step1: accept({ name: 'Alice' }) },
          requestState: r1.requestState,
        }),
      );
      expect(Object.keys(r2.inputRequests as Json)).toEqual(['step2']);
      expect(r2.requestState).not.toBe(r1.requestState);
      const r3 = resultOf(
        await rpc(fixture.url, 'tools/call', {
          name,
          inputResponses: { step2: accept({ color: 'blue' }) },
          requestState: r2.requestState,
        }),
      );
      expect(r3).toMatchObject({ resultType: 'complete', content: [{ text: 'Alice likes blue' }] });
    });

    it('request-state: answers count only with the echoed state', async () => {
      const name = 'test_input_required_result_request_state';
      const r1 = resultOf(await rpc(fixture.url, 'tools/call', { name }));
      const withoutState = resultOf(
        await rpc(fixture.url, 'tools/call', { name, inputResponses: { confirm: accept({ ok: true }) } }),
      );
      expect(withoutState.resultType).toBe('input_required');
      const withState = resultOf(
        await rpc(fixture.url, 'tools/call', {
          name,
          inputResponses: { confirm: accept({ ok: true }) },
          requestState: r1.requestState,
        }),
      );
      expect(JSON.stringify(withState.content)).toContain('state-ok');
    });

    it('rejects a tampered requestState with -32602', async () => {
      const name = 'test_input_required_result_tampered_state';
      const r1 = resultOf(await rpc(fixture.url, 'tools/call', { name }));
      const res = await rpc(fixture.url, 'tools/call', {
        name,
        inputResponses: { confirm: accept({ ok: true }) },
        requestState: `${String(r1.requestState)}-TAMPERED`,
      });
      expect(errorOf(res).code).toBe(-32602);
    });

    it('multiple inputs and capabilities: only request kinds the client declared', async () => {
      const all = resultOf(
        await rpc(fixture.url, 'tools/call', { name: 'test_input_required_result_multiple_inputs' }),
      );
      expect(Object.keys(all.inputRequests as Json).sort()).toEqual([
        'client_roots',
        'greeting',
        'user_name',
      ]);
      const samplingOnly = resultOf(
        await rpc(
          fixture.url,
          'tools/call',
          { name: 'test_input_required_result_capabilities' },
          { caps: { sampling: {} } },
        ),
      );
      expect(Object.values(samplingOnly.inputRequests as Record<string, Json>).map((r) => r.method)).toEqual([
        'sampling/createMessage',
      ]);
      const none = await rpc(
        fixture.url,
        'tools/call',
        { name: 'test_input_required_result_elicitation' },
        { caps: {} },
      );
      expect(errorOf(none)).toMatchObject({
        code: -32021,
        data: { requiredCapabilities: { elicitation: {} } },
      });
    });
  });
});
