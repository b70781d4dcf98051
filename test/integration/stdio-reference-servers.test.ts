/**
 * The reference MCP servers people install from npm, run by the gateway over stdio from the operator's
 * catalog (issue 26): `@modelcontextprotocol/server-filesystem` on a root directory a project names
 * inside the operator's base, and `@modelcontextprotocol/server-memory` with its store file likewise.
 * Their tools are listed and called through the real gateway; the filesystem server's own checks keep a
 * project inside its root. Real processes, real Temporal, both databases.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { resultText } from '../helpers/mcp-client';

const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
const MEMORY = require.resolve('@modelcontextprotocol/server-memory/dist/index.js');

let base: string;
let gw: TestGateway;

beforeAll(async () => {
  base = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-stdio-ref-'));
  mkdirSync(path.join(base, 'team-a'));
  mkdirSync(path.join(base, 'team-b'));
  writeFileSync(path.join(base, 'team-a', 'hello.txt'), 'hello from team a');
  writeFileSync(path.join(base, 'secret.txt'), 'not for team a');
  gw = await startTestGateway({
    config: {
      stdio: {
        catalog: {
          filesystem: {
            command: process.execPath,
            args: [FILESYSTEM, '{root}'],
            settable: { root: { pattern: '[a-z0-9-]+', under: base } },
          },
          memory: {
            command: process.execPath,
            args: [MEMORY],
            settable: { store: { pattern: '[a-z0-9-]+\\.jsonl', under: base, env: 'MEMORY_FILE_PATH' } },
          },
        },
      },
    },
    projects: () => [
      {
        slug: 'files',
        namespacing: false,
        upstreams: [{ alias: 'fs', url: 'stdio:filesystem?root=team-a' }],
      },
      {
        slug: 'files-b',
        namespacing: false,
        upstreams: [{ alias: 'fs', url: 'stdio:filesystem?root=team-b' }],
      },
      {
        slug: 'notes',
        namespacing: false,
        upstreams: [{ alias: 'memory', url: 'stdio:memory?store=team-a.jsonl' }],
      },
    ],
  });
}, 180_000);
afterAll(async () => {
  await gw?.close();
  rmSync(base, { recursive: true, force: true });
});

test('the filesystem server: its tools through the gateway, inside the root the project named', async () => {
  const client = gw.clientFor('files');
  const tools = await client.request('tools/list', {}, { tasks: false });
  const names = ((tools.body.result?.tools ?? []) as Array<{ name: string }>).map((t) => t.name);
  expect(names).toEqual(expect.arrayContaining(['read_text_file', 'list_directory']));

  const read = await client.callTool(
    'read_text_file',
    { path: path.join(base, 'team-a', 'hello.txt') },
    { tasks: false },
  );
  expect(resultText(read.body.result)).toContain('hello from team a');
  // Outside the root the server refuses (its own check; the catalog decided the root).
  const outside = await client.callTool(
    'read_text_file',
    { path: path.join(base, 'secret.txt') },
    { tasks: false },
  );
  expect(JSON.stringify(outside.body)).not.toContain('not for team a');
  expect(JSON.stringify(outside.body)).toMatch(/denied|outside|not allowed/i);
});

test('the filesystem server writes inside its root; two projects with different roots never see each other', async () => {
  const a = gw.clientFor('files');
  const b = gw.clientFor('files-b');
  const written = await a.callTool(
    'write_file',
    { path: path.join(base, 'team-a', 'plan.txt'), content: 'team a plan' },
    { tasks: false },
  );
  expect(written.body.result?.isError).not.toBe(true);
  expect(readFileSync(path.join(base, 'team-a', 'plan.txt'), 'utf8')).toBe('team a plan');
  const listed = await a.callTool('list_directory', { path: path.join(base, 'team-a') }, { tasks: false });
  expect(resultText(listed.body.result)).toContain('plan.txt');
  // Project b's server is confined to team-b: team a's files are refused, its own listing is empty of them.
  const peek = await b.callTool(
    'read_text_file',
    { path: path.join(base, 'team-a', 'plan.txt') },
    { tasks: false },
  );
  expect(JSON.stringify(peek.body)).not.toContain('team a plan');
  expect(JSON.stringify(peek.body)).toMatch(/denied|outside|not allowed/i);
  const own = await b.callTool('list_directory', { path: path.join(base, 'team-b') }, { tasks: false });
  expect(resultText(own.body.result)).not.toContain('plan.txt');
});

test('the memory server: entities created and read back, kept in the store file the project named', async () => {
  const client = gw.clientFor('notes');
  const created = await client.callTool(
    'create_entities',
    { entities: [{ name: 'TaskRouter', entityType: 'gateway', observations: ['runs stdio servers'] }] },
    { tasks: false },
  );
  expect(created.body.error).toBeUndefined();
  const graph = await client.callTool('read_graph', {}, { tasks: false });
  expect(resultText(graph.body.result)).toContain('runs stdio servers');
  const file = path.join(base, 'team-a.jsonl');
  expect(existsSync(file)).toBe(true);
  expect(readFileSync(file, 'utf8')).toContain('TaskRouter');
});
