/**
 * The example upstream's conformance fixtures over real HTTP, subscriptions/listen: the acknowledged
 * filter first, then only the notifications the filter agreed to.
 */
import { META, PROTOCOL_VERSION } from '../../src/protocol';
import type { Json } from './conformance-fixtures-client';
import { fixturesUpstream, nextRequestId, rpc } from './conformance-fixtures-client';

describe('example upstream conformance fixtures', () => {
  const fixture = fixturesUpstream();

  describe('subscriptions/listen', () => {
    /**
     * Opens a listen stream, runs `during` once the ack arrived, and collects messages for `ms` after
     * `during` is done (not from the open: on a loaded machine its calls alone can take longer).
     */
    async function listen(filter: Json, during: () => Promise<unknown>, ms = 300): Promise<Json[]> {
      const controller = new AbortController();
      const id = nextRequestId();
      const res = await fetch(fixture.url, {
        method: 'POST',
        signal: controller.signal,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': PROTOCOL_VERSION,
          'mcp-method': 'subscriptions/listen',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'subscriptions/listen',
          params: {
            notifications: filter,
            _meta: { [META.protocolVersion]: PROTOCOL_VERSION, [META.clientCapabilities]: {} },
          },
        }),
      });
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      const messages: Json[] = [];
      let buffer = '';
      let triggered = false;
      // Until the ack arrives and `during` has run, only a guard against a stream that never answers.
      let deadline = setTimeout(() => controller.abort(), 30_000);
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          const lines = buffer.split('\n');
          buffer = lines.pop() ?? '';
          for (const line of lines)
            if (line.startsWith('data:')) messages.push(JSON.parse(line.slice(5)) as Json);
          if (!triggered && messages.length > 0) {
            triggered = true;
            await during();
            clearTimeout(deadline);
            deadline = setTimeout(() => controller.abort(), ms);
          }
        }
      } catch (err) {
        if (!controller.signal.aborted) throw err;
      } finally {
        clearTimeout(deadline);
      }
      for (const message of messages) {
        expect((message.params as { _meta: Json })._meta[META.subscriptionId]).toBe(id);
      }
      return messages;
    }

    it('acknowledges the agreed filter first, then relays tools/list_changed', async () => {
      const messages = await listen({ toolsListChanged: true, resourcesListChanged: true }, () =>
        rpc(fixture.url, 'tools/call', { name: 'test_trigger_tool_change' }),
      );
      expect(messages[0]).toMatchObject({
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: { toolsListChanged: true } },
      });
      expect((messages[0]?.params as Json).notifications).toEqual({ toolsListChanged: true });
      expect(messages.slice(1).map((m) => m.method)).toEqual(['notifications/tools/list_changed']);
    });

    it('acknowledges only the resources it serves and sends updates only of those', async () => {
      const messages = await listen(
        { resourceSubscriptions: ['test://static-text', 'test://unknown'] },
        async () => {
          // Sent in this order on the stream: had the binary one been sent, it would come first.
          await rpc(fixture.url, 'tools/call', {
            name: 'test_update_resource',
            arguments: { uri: 'test://static-binary' },
          });
          await rpc(fixture.url, 'tools/call', {
            name: 'test_update_resource',
            arguments: { uri: 'test://static-text' },
          });
        },
      );
      expect((messages[0]?.params as Json).notifications).toEqual({
        resourceSubscriptions: ['test://static-text'],
      });
      expect(messages.slice(1).map((m) => [m.method, (m.params as Json).uri])).toEqual([
        ['notifications/resources/updated', 'test://static-text'],
      ]);
    });

    it('honours the filter: no tools notification on a prompts-only stream', async () => {
      const messages = await listen({ promptsListChanged: true }, async () => {
        await rpc(fixture.url, 'tools/call', { name: 'test_trigger_tool_change' });
        await rpc(fixture.url, 'tools/call', { name: 'test_trigger_prompt_change' });
      });
      expect(messages.map((m) => m.method)).toEqual([
        'notifications/subscriptions/acknowledged',
        'notifications/prompts/list_changed',
      ]);
    });
  });
});
