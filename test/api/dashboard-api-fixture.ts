/**
 * The dashboard API tests' world (dashboard-api-*.test.ts): the dashboard fixture (the real gateway,
 * Temporal dev server and example upstream on the database under test, docs/dashboard.md's roles) with
 * five tasks in project `board`, alice's confirm_delete waiting for input among them.
 */
import type { DashboardFixture } from '../helpers/dashboard';
import { startDashboardFixture, waitForDetail } from '../helpers/dashboard';
import { TASKS_AND_FORM_CAPS } from '../helpers/mcp-client';

export const MARKER = 'quarterly-report-7c1f.txt';
export const UI = 'http://temporal-ui.example:8233';

/** The fixture of the calling test file (set by useBoardFixture()'s beforeAll). */
export let f: DashboardFixture;
/** The refs of the five tasks started before the tests. */
export const t: Record<'aliceInput' | 'aliceSlow' | 'aliceDone' | 'bobSlow' | 'keySlow', string> = {
  aliceInput: '',
  aliceSlow: '',
  aliceDone: '',
  bobSlow: '',
  keySlow: '',
};
/** The safe metadata of alice's confirm_delete task while it waits, as every role sees it. */
export const ALICE_INPUT_METADATA = {
  tool: 'confirm_delete',
  upstream: 'example',
  caller: { kind: 'user', user: { handle: 'alice' } },
  status: 'input_required',
  statusMessage: 'Waiting for delete confirmation',
  assignee: null,
};
export const task = (ref: string, rest = '') => `/v1/projects/board/tasks/${ref}${rest}`;

/**
 * Starts the fixture and the five tasks before the tests of the calling file (the completed one done and
 * the confirm_delete one waiting for input), and closes it after them.
 */
export function useBoardFixture(): void {
  beforeAll(async () => {
    f = await startDashboardFixture({ temporalUiUrl: UI });
    t.aliceDone = (await f.startTask('alice', 'slow_compute', { seconds: 0, label: 'quick' })).ref;
    t.keySlow = (await f.startTask('key', 'slow_compute', { seconds: 120, label: 'nightly' })).ref;
    t.bobSlow = (await f.startTask('bob', 'slow_compute', { seconds: 120, label: 'bob-job' })).ref;
    t.aliceSlow = (await f.startTask('alice', 'slow_compute', { seconds: 120, label: 'alice-job' })).ref;
    t.aliceInput = (
      await f.startTask(
        'alice',
        'confirm_delete',
        { filename: MARKER },
        { capabilities: TASKS_AND_FORM_CAPS },
      )
    ).ref;
    await waitForDetail(f.api('alice'), task(t.aliceDone), (b) => b.task.status === 'completed');
    await waitForDetail(f.api('alice'), task(t.aliceInput), (b) => b.task.status === 'input_required');
  });
  afterAll(async () => {
    await f?.close();
  });
}
