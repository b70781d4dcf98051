/**
 * Workflow stack traces (`temporal.workflowStackTraces`, src/temporal/worker.ts): off by default, the
 * patched SDK (patches/@temporalio+worker+*.patch) installs no promise hook in the worker's workflow
 * thread, and the `__stack_trace` query (the Web UI's "Stack Trace" tab) says they are not enabled; on,
 * it answers where the workflow waits. A real threaded worker on the dev server for each setting, each in
 * a process of its own (test/fixtures/stack-trace-worker.ts), as the gateway's worker runs.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { testTemporal } from '../helpers/temporal';

const run = promisify(execFile);

/** What test/fixtures/stack-trace-worker.ts prints. */
type QueryAnswer = { ok: boolean; stack?: string; error?: string };
const root = path.join(__dirname, '..', '..');

describe('workflow stack traces', () => {
  const { address, namespace } = testTemporal();

  async function stackTraceQuery(setting: 'on' | 'default'): Promise<QueryAnswer> {
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', 'test/fixtures/stack-trace-worker.ts', address, namespace, setting],
      { cwd: root, timeout: 55_000 },
    );
    return JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as QueryAnswer;
  }

  it('are off unless asked for: the query says they are not enabled', async () => {
    const answer = await stackTraceQuery('default');
    expect(answer.ok).toBe(false);
    expect(answer.error).toMatch(/stack traces are not enabled/);
  }, 60_000);

  it('answer where the workflow waits when turned on', async () => {
    const answer = await stackTraceQuery('on');
    expect(answer.ok).toBe(true);
    expect(answer.stack).toMatch(/waitingWorkflow/);
  }, 60_000);
});
