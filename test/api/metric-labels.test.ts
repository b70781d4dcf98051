/**
 * The outcome label of `taskrouter_mcp_requests_total` (src/api/mcp/endpoint.ts): the gateway's own error
 * codes by code; an upstream's own code, relayed unchanged to the client, as `other`. An upstream chooses
 * its codes freely, so with the code as the label every new one added a series to /metrics for good.
 */
import { metricsText } from '../../src/telemetry/metrics';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import type { HostileUpstream } from '../helpers/hostile-upstream';
import { startHostileUpstream } from '../helpers/hostile-upstream';

let gw: TestGateway;
let upstream: HostileUpstream;
beforeAll(async () => {
  // Every tools/call fails with the code the call asks for.
  upstream = await startHostileUpstream({
    onRequest: (_req, res, message) => {
      const code = Number((message.params['arguments'] as { code?: number } | undefined)?.code ?? -1);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code, message: 'no such luck' } }));
    },
  });
  gw = await startTestGateway({
    projects: () => [{ slug: 'coded', namespacing: false, upstreams: [{ alias: 'h', url: upstream.url }] }],
  });
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

test("an upstream's own error codes are relayed to the client and counted as other", async () => {
  const client = gw.clientFor('coded');
  for (const code of [-12345, -23456, 777]) {
    const reply = await client.callTool('attack', { code }, { tasks: false });
    expect(reply.body.error).toMatchObject({ code, message: 'no such luck' });
  }
  const unknown = await client.request('no/such/method', {});
  expect(unknown.body.error?.code).toBe(-32601);

  const metrics = await metricsText();
  const toolCalls = metrics
    .split('\n')
    .filter((l) => l.startsWith('taskrouter_mcp_requests_total{method="tools/call"'));
  expect(toolCalls.join('\n')).toMatch(/outcome="other"\} [3-9]/);
  for (const code of ['-12345', '-23456', '777']) expect(metrics).not.toContain(`outcome="${code}"`);
  // The gateway's own codes keep theirs.
  expect(metrics).toMatch(
    /taskrouter_mcp_requests_total\{method="other",era="2026-07-28",outcome="-32601"\} [1-9]/,
  );
});
