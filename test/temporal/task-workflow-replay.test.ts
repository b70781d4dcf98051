/**
 * Task workflow histories recorded by earlier versions of the workflow replay on today's bundle, so a
 * change that would break running (or recorded) tasks fails here first. The fixtures in
 * test/fixtures/histories/ were recorded from a gateway (`startTestGateway`, the example upstream behind
 * it) with the workflow as of commit 30a67ca, each with the encryption keys its payloads were sealed
 * with (test keys only): a task that completed (`slow_compute`), a synchronous result (`greet`), and a
 * first call that failed before the gateway settled a recorded task on such a failure (the upstream
 * offline). `hub-task-completed` and `hub-task-input` were recorded the same way at the watch hub's
 * introduction (issue 23, `tasks.watchBy: hub`): a task watched by the hub that completed, and one that
 * asked for input, was answered with tasks/update and completed. `hub-task-recorded-end` (stop 41): a
 * hub-watched task whose end the hub's poll recorded and said so, the workflow skipping its own record
 * (`poll-recorded-end`). `hub-task-adopted` (stop 45): a task the API created, on an upstream whose
 * interval let the workflow adopt the API's watch hub row as its first enlistment (no local activity at
 * all). `hosted-queued` and `hosted-queue-asked` (stop 51): hosted calls to an upstream with
 * `maxConcurrent: 1` as of commit 7a91498, when a queued call waited in an activity (waitForHostedSlot):
 * one that queued behind another, and one that asked the client twice (it kept its slot then); both
 * completed. Record new ones the same way (`historyToJSON(await handle.fetchHistory())`) before a change
 * to the workflow's commands, store them one event a line like the others (prettier leaves that folder
 * alone), and add them here.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import type { Keyring } from '../../src/store/cipher';
import { Cipher } from '../../src/store/cipher';
import { createDataConverter } from '../../src/temporal/codec';
import { workflowSpanSinks } from '../../src/temporal/tracing';
import { workflowBundleOptions } from '../../src/temporal/worker';

interface Fixture {
  workflowId: string;
  encryption: Keyring;
  history: unknown;
}

let bundle: WorkflowBundleWithSourceMap;
beforeAll(async () => {
  bundle = await bundleWorkflowCode(workflowBundleOptions());
}, 120_000);

function fixture(name: string): Fixture {
  const file = path.join(__dirname, '../fixtures/histories', `${name}.json`);
  return JSON.parse(readFileSync(file, 'utf8')) as Fixture;
}

test.each([
  'task-completed',
  'sync-result',
  'first-call-error',
  'hub-task-completed',
  'hub-task-input',
  'hub-task-recorded-end',
  'hub-task-adopted',
  'hosted-queued',
  'hosted-queue-asked',
])(
  '%s replays',
  async (name) => {
    const { workflowId, encryption, history } = fixture(name);
    const options = {
      workflowBundle: bundle,
      dataConverter: createDataConverter(new Cipher(encryption)),
      sinks: workflowSpanSinks(),
    };
    await expect(Worker.runReplayHistory(options, history, workflowId)).resolves.toBeUndefined();
  },
  60_000,
);
