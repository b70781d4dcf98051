/**
 * A Python MCP server from PyPI run by the gateway over stdio (issue 26): `mcp-server-time` (pinned,
 * installed into a venv by scripts/install-python-stdio-servers.sh), named by an entry of the operator's
 * catalog that runs the venv's python. Its tools are listed under the upstream's namespace and called
 * through the real gateway; a timezone it does not know gives its own error, relayed as the tool's
 * error result. Real processes, real Temporal, both databases.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { findRepoRoot } from '../../src/config/paths';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import type { McpTestClient } from '../helpers/mcp-client';
import { resultText } from '../helpers/mcp-client';

const REPO_ROOT = findRepoRoot(__dirname);

let gw: TestGateway;
let client: McpTestClient;

beforeAll(async () => {
  const python = execFileSync('bash', [path.join(REPO_ROOT, 'scripts/install-python-stdio-servers.sh')], {
    encoding: 'utf8',
  }).trim();
  gw = await startTestGateway({
    config: {
      stdio: {
        catalog: {
          time: {
            command: python,
            args: ['-m', 'mcp_server_time', '--local-timezone', '{zone}'],
            settable: { zone: { pattern: '[A-Za-z]+(/[A-Za-z_]+)?', required: true } },
          },
        },
      },
    },
    projects: () => [{ slug: 'clock', upstreams: [{ alias: 'time', url: 'stdio:time?zone=UTC' }] }],
  });
  client = gw.clientFor('clock');
}, 180_000);
afterAll(async () => {
  await gw?.close();
});

test('its tools are listed under the upstream alias', async () => {
  const listed = await client.request('tools/list', {}, { tasks: false });
  expect(listed.body.error).toBeUndefined();
  const tools = (listed.body.result?.tools ?? []) as Array<{ name: string; inputSchema?: unknown }>;
  expect(tools.map((t) => t.name).sort()).toEqual(['time.convert_time', 'time.get_current_time']);
  expect(JSON.stringify(tools.find((t) => t.name === 'time.get_current_time')?.inputSchema)).toContain(
    'timezone',
  );
});

test('get_current_time answers for the timezone asked, with its structured result', async () => {
  const reply = await client.callTool('time.get_current_time', { timezone: 'Asia/Tokyo' }, { tasks: false });
  expect(reply.body.error).toBeUndefined();
  const result = reply.body.result;
  expect(result?.isError).not.toBe(true);
  expect(result?.structuredContent).toMatchObject({ timezone: 'Asia/Tokyo' });
  // Tokyo keeps no summer time: always +09:00.
  expect(String((result?.structuredContent as { datetime?: string }).datetime)).toMatch(/\+09:00$/);
  expect(resultText(result)).toContain('Asia/Tokyo');

  const converted = await client.callTool(
    'time.convert_time',
    { source_timezone: 'UTC', time: '12:00', target_timezone: 'Asia/Tokyo' },
    { tasks: false },
  );
  expect(converted.body.result?.structuredContent).toMatchObject({
    source: { timezone: 'UTC' },
    target: { timezone: 'Asia/Tokyo' },
    time_difference: '+9.0h',
  });
});

test("a timezone the server does not know gives the server's own error, relayed as the tool's error", async () => {
  const reply = await client.callTool(
    'time.get_current_time',
    { timezone: 'Mars/Olympus' },
    { tasks: false },
  );
  // A tool's failure is its result (isError), not a protocol error of the gateway.
  expect(reply.status).toBe(200);
  expect(reply.body.error).toBeUndefined();
  expect(reply.body.result?.isError).toBe(true);
  expect(resultText(reply.body.result)).toMatch(/Invalid timezone.*Mars\/Olympus/);
  // The process is still there: the next call is answered.
  const next = await client.callTool('time.get_current_time', { timezone: 'UTC' }, { tasks: false });
  expect(next.body.result?.structuredContent).toMatchObject({ timezone: 'UTC' });
});
