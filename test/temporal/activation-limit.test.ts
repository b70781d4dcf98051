/**
 * The workflow activation limit (src/temporal/worker.ts, `temporal.workflowActivationLimitMs`) reaches
 * the SDK's sandbox, and with no limit, the patched SDK (patches/@temporalio+worker+*.patch) calls into
 * the sandbox without a `timeout`, so Node starts no watchdog thread per call. Debug mode runs the
 * sandbox in this thread, where its `vm.Script#runInContext` calls can be watched; the threaded sandbox
 * of a normal worker gets the same limit from the same compiled options.
 */
import { randomUUID } from 'node:crypto';
import vm from 'node:vm';
import { Client, Connection } from '@temporalio/client';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { NO_ACTIVATION_LIMIT_MS, withActivationLimit } from '../../src/temporal/worker';
import { testTemporal } from '../helpers/temporal';

const silent = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };

describe('workflow activation limit', () => {
  const { address, namespace } = testTemporal();
  let bundle: WorkflowBundleWithSourceMap;
  let connection: NativeConnection;
  let clientConnection: Connection;

  beforeAll(async () => {
    bundle = await bundleWorkflowCode({
      workflowsPath: require.resolve('../fixtures/echo-workflow'),
      logger: silent,
    });
    connection = await NativeConnection.connect({ address });
    clientConnection = await Connection.connect({ address });
  }, 60_000);

  afterAll(async () => {
    await connection?.close();
    await clientConnection?.close();
  });

  /** Runs one workflow on a debug-mode worker with this limit; the timeouts of its calls into the sandbox. */
  async function sandboxTimeouts(limitMs: number): Promise<Array<number | undefined>> {
    const taskQueue = `activation-limit-${randomUUID()}`;
    const worker = await Worker.create(
      withActivationLimit(limitMs, {
        connection,
        namespace,
        taskQueue,
        workflowBundle: bundle,
        debugMode: true,
      }),
    );
    const spy = jest.spyOn(vm.Script.prototype, 'runInContext');
    try {
      const client = new Client({ connection: clientConnection, namespace });
      const result = await worker.runUntil(
        client.workflow.execute('echoWorkflow', { taskQueue, workflowId: taskQueue, args: ['hello'] }),
      );
      expect(result).toBe('hello');
      // The sandbox's calls carry `displayErrors`; the bundle's own evaluation is not one of them.
      return spy.mock.calls
        .map(([, options]) => options)
        .filter(
          (o): o is vm.RunningScriptOptions => typeof o === 'object' && o !== null && 'displayErrors' in o,
        )
        .map((o) => o.timeout);
    } finally {
      spy.mockRestore();
    }
  }

  it('passes no timeout into the sandbox when there is no limit (no watchdog thread per call)', async () => {
    const timeouts = await sandboxTimeouts(NO_ACTIVATION_LIMIT_MS);
    expect(timeouts.length).toBeGreaterThan(4);
    expect(timeouts.filter((t) => t !== undefined)).toEqual([]);
  }, 60_000);

  it('enforces a configured limit on every call into the sandbox', async () => {
    const timeouts = await sandboxTimeouts(5000);
    expect(timeouts.length).toBeGreaterThan(4);
    expect(new Set(timeouts)).toEqual(new Set([5000]));
  }, 60_000);
});
