/**
 * The creation reconciler (src/temporal/creation-reconciler.ts) on the database under test: recorded tasks
 * whose workflow start fails at every round (a payload that no longer opens, a start Temporal refuses)
 * go to the back of the line and never keep the tasks behind them from being started, however many
 * there are. The start itself is a stand-in recording which task it was asked for: what is under test is
 * the reconciler's choice of claims in the real store (test/integration/first-call-api.test.ts runs the
 * whole path).
 */
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { Cipher, generateKey } from '../../src/store/cipher';
import { FirstCalls } from '../../src/store/tasks/first-calls';
import { PayloadStore } from '../../src/store/tasks/payload-store';
import { taskKeyOf, TaskStore } from '../../src/store/tasks/task-store';
import { CreationReconciler } from '../../src/temporal/creation-reconciler';
import type { TaskWorkflowInput } from '../../src/workflows/messages';
import { freshDatabaseForFile } from '../helpers/store';

const database = freshDatabaseForFile();
const cipher = new Cipher({ activeKeyId: 'k1', keys: { k1: generateKey() } });

test('recorded tasks whose start always fails do not keep newer ones from being started', async () => {
  const payloads = new PayloadStore(database(), cipher);
  const claims = new FirstCalls(database());
  /** A recorded claim `minutesAgo` old, with its start input. */
  const recorded = async (minutesAgo: number) => {
    const key = taskKeyOf(randomUUID());
    const then = new FirstCalls(database(), () => new Date(Date.now() - minutesAgo * 60_000));
    await then.claim(key, 'sending');
    await then.move(key, 'sending', 'recorded');
    await payloads.put(key, 'start_input', { taskKey: key });
    return key;
  };
  // Three that fail at every round, older than the one that would start.
  const failing = [await recorded(30), await recorded(29), await recorded(28)];
  const healthy = await recorded(20);
  const asked: string[] = [];
  const reconciler = new CreationReconciler({
    firstCalls: claims,
    payloads,
    store: new TaskStore(database(), cipher),
    startCreated: (input: TaskWorkflowInput) => {
      asked.push(input.taskKey);
      return failing.includes(input.taskKey)
        ? Promise.reject(new Error('Temporal refused the start'))
        : Promise.resolve('started' as const);
    },
    logger: pino({ level: 'silent' }),
    everyMs: 60_000,
    lostAfterMs: 3_600_000,
    graceMs: 1,
    // A batch smaller than the failing claims: before, the same three filled every round.
    batchSize: 2,
  });
  const rounds: number[] = [];
  for (let i = 0; i < 3 && (await claims.stateOf(healthy)) !== 'started'; i++) {
    await new Promise((r) => setTimeout(r, 5));
    rounds.push((await reconciler.runOnce()).started);
  }
  expect(await claims.stateOf(healthy)).toBe('started');
  expect(rounds.reduce((a, b) => a + b, 0)).toBe(1);
  // The failing ones are still recorded, and tried again at later rounds.
  for (const key of failing) expect(await claims.stateOf(key)).toBe('recorded');
  expect(new Set(asked.filter((k) => failing.includes(k))).size).toBeGreaterThanOrEqual(2);
});
