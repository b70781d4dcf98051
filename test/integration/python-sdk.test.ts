/**
 * The official MCP Python SDK's client (PyPI `mcp` 2.3.0, installed into .tools by
 * scripts/install-python-mcp.sh, run as test/fixtures/python-mcp-client.py) against a real gateway,
 * Temporal dev server and example upstream. The client negotiates the version itself (2026-07-28 with
 * this gateway), or uses the 2025-11-25 handshake, and does not declare Tasks: task-only tools are
 * answered inline, and every answer must pass the SDK's own validation (at 2026-07-28 it refuses a
 * result without `resultType`).
 */
import { execFile, execFileSync } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { findRepoRoot } from '../../src/config/paths';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';

const REPO_ROOT = findRepoRoot(__dirname);
const SCRIPT = path.join(REPO_ROOT, 'test/fixtures/python-mcp-client.py');

interface PythonRun {
  protocolVersion: string;
  serverName: string | null;
  tools: string[];
  calls: Record<string, { result?: Record<string, unknown>; error?: string }>;
}

let python: string;
let gw: TestGateway;
beforeAll(async () => {
  python = execFileSync('bash', [path.join(REPO_ROOT, 'scripts/install-python-mcp.sh')], {
    encoding: 'utf8',
  }).trim();
  gw = await startTestGateway();
}, 180_000);
afterAll(async () => {
  await gw?.close();
});

async function runClient(mode: 'auto' | 'legacy', ...tools: string[]): Promise<PythonRun> {
  const { stdout } = await promisify(execFile)(python, [SCRIPT, gw.client.url, mode, ...tools], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  return JSON.parse(stdout) as PythonRun;
}

describe.each([
  ['auto', '2026-07-28'],
  ['legacy', '2025-11-25'],
] as const)("the SDK's %s mode", (mode, version) => {
  test(`negotiates ${version}, lists the tools, gets task-only tools answered inline, in the gateway's name`, async () => {
    const run = await runClient(mode, 'bare_result_job', 'failing_job', 'test_simple_text');
    expect(run.protocolVersion).toBe(version);
    expect(run.serverName).toBe('taskrouter');
    expect(run.tools).toEqual(expect.arrayContaining(['bare_result_job', 'failing_job', 'test_simple_text']));
    // The task result has no resultType upstream; the SDK refuses such an answer at 2026-07-28, so an
    // error here is the bug.
    expect(run.calls['bare_result_job']).toEqual({
      result: expect.objectContaining({
        content: [expect.objectContaining({ type: 'text', text: 'A bare result' })],
        isError: false,
      }),
    });
    expect(run.calls['failing_job']).toEqual({ result: expect.objectContaining({ isError: true }) });
    expect(run.calls['test_simple_text']).toEqual({
      result: expect.objectContaining({ content: [expect.objectContaining({ type: 'text' })] }),
    });
    // Every answer names the gateway, never the upstream behind it.
    expect(JSON.stringify(run)).not.toContain('example-upstream');
  });
});
