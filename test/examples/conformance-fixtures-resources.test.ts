/**
 * The example upstream's conformance fixtures over real HTTP, resources, prompts and completion: lists
 * with cache hints, reads, argument substitution, MRTR on prompts/get and completion by prefix.
 */
import type { Json } from './conformance-fixtures-client';
import { accept, errorOf, fixturesUpstream, resultOf, rpc } from './conformance-fixtures-client';

describe('example upstream conformance fixtures', () => {
  const fixture = fixturesUpstream();

  describe('resources', () => {
    it('lists resources and templates with cache hints', async () => {
      const list = resultOf(await rpc(fixture.url, 'resources/list'));
      expect(list).toMatchObject({ resultType: 'complete', ttlMs: 60_000, cacheScope: 'public' });
      expect((list.resources as Json[]).map((r) => r.uri)).toEqual([
        'test://static-text',
        'test://static-binary',
      ]);
      const templates = resultOf(await rpc(fixture.url, 'resources/templates/list'));
      expect(templates).toMatchObject({
        resourceTemplates: [{ uriTemplate: 'test://template/{id}/data' }],
        ttlMs: 60_000,
        cacheScope: 'public',
      });
    });

    it('reads text, binary and templated resources', async () => {
      const text = resultOf(await rpc(fixture.url, 'resources/read', { uri: 'test://static-text' }));
      expect(text).toMatchObject({
        resultType: 'complete',
        contents: [{ uri: 'test://static-text', mimeType: 'text/plain', text: expect.any(String) }],
        ttlMs: 60_000,
        cacheScope: 'public',
      });
      const binary = resultOf(await rpc(fixture.url, 'resources/read', { uri: 'test://static-binary' }));
      expect(binary.contents).toEqual([
        expect.objectContaining({ mimeType: 'image/png', blob: expect.any(String) }),
      ]);
      const templated = resultOf(
        await rpc(fixture.url, 'resources/read', { uri: 'test://template/123/data' }),
      );
      const contents = (templated.contents as Json[])[0] as { text: string };
      expect(JSON.parse(contents.text)).toEqual({ id: '123', templateTest: true, data: 'Data for ID: 123' });
    });

    it('answers an unknown URI with -32602 naming it (SEP-2164)', async () => {
      const uri = 'test://nope';
      const error = errorOf(await rpc(fixture.url, 'resources/read', { uri }));
      expect(error).toMatchObject({ code: -32602, data: { uri } });
    });

    it('keeps resources/subscribe removed (-32601, 404)', async () => {
      const res = await rpc(fixture.url, 'resources/subscribe', { uri: 'test://static-text' });
      expect(res.status).toBe(404);
      expect(errorOf(res).code).toBe(-32601);
    });
  });

  describe('prompts and completion', () => {
    it('lists prompts with cache hints', async () => {
      const list = resultOf(await rpc(fixture.url, 'prompts/list'));
      expect(list).toMatchObject({ ttlMs: 60_000, cacheScope: 'public' });
      expect((list.prompts as Json[]).map((p) => p.name)).toEqual([
        'test_simple_prompt',
        'test_prompt_with_arguments',
        'test_prompt_with_embedded_resource',
        'test_prompt_with_image',
        'test_input_required_result_prompt',
      ]);
    });

    it('substitutes arguments, embeds resources and images', async () => {
      const args = resultOf(
        await rpc(fixture.url, 'prompts/get', {
          name: 'test_prompt_with_arguments',
          arguments: { arg1: 'a', arg2: 'b' },
        }),
      );
      expect(args).toMatchObject({
        resultType: 'complete',
        messages: [
          { role: 'user', content: { type: 'text', text: "Prompt with arguments: arg1='a', arg2='b'" } },
        ],
      });
      const embedded = resultOf(
        await rpc(fixture.url, 'prompts/get', {
          name: 'test_prompt_with_embedded_resource',
          arguments: { resourceUri: 'test://example-resource' },
        }),
      );
      expect((embedded.messages as Json[])[0]).toMatchObject({
        content: { type: 'resource', resource: { uri: 'test://example-resource' } },
      });
      const image = resultOf(await rpc(fixture.url, 'prompts/get', { name: 'test_prompt_with_image' }));
      expect((image.messages as Json[])[0]).toMatchObject({
        content: { type: 'image', mimeType: 'image/png' },
      });
    });

    it('rejects missing required arguments and unknown prompts with -32602', async () => {
      expect(
        errorOf(await rpc(fixture.url, 'prompts/get', { name: 'test_prompt_with_arguments' })).code,
      ).toBe(-32602);
      expect(errorOf(await rpc(fixture.url, 'prompts/get', { name: 'nope' })).code).toBe(-32602);
    });

    it('runs MRTR on prompts/get', async () => {
      const name = 'test_input_required_result_prompt';
      const r1 = resultOf(await rpc(fixture.url, 'prompts/get', { name }));
      expect(r1).toMatchObject({ resultType: 'input_required', inputRequests: { user_context: {} } });
      const r2 = resultOf(
        await rpc(fixture.url, 'prompts/get', {
          name,
          inputResponses: { user_context: accept({ context: 'ctx' }) },
          requestState: r1.requestState,
        }),
      );
      expect(r2).toMatchObject({
        resultType: 'complete',
        messages: [{ content: { text: 'Use this context: ctx' } }],
      });
    });

    it('completes prompt arguments by prefix', async () => {
      const result = resultOf(
        await rpc(fixture.url, 'completion/complete', {
          ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
          argument: { name: 'arg1', value: 'par' },
        }),
      );
      expect(result).toEqual(
        expect.objectContaining({
          resultType: 'complete',
          completion: { values: ['paris', 'park', 'party'], total: 3, hasMore: false },
        }),
      );
    });
  });
});
