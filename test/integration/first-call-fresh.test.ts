/**
 * A first call in flight longer than `tasks.firstCallLostAfterMs` is not declared lost while its sender
 * waits for the answer (store/tasks/first-calls.ts, whileSending): an upstream may take that long (each
 * progress notification restarts the call's deadline). Here the limit is 1 s and the reconciler looks
 * every 200 ms; the upstream's `work` tool answers after 4 s. Real gateway (the API sends first calls),
 * Temporal dev server and example upstream, both databases.
 */
import type { Kysely } from 'kysely';
import { openDatabase } from '../../src/store/database';
import type { Database } from '../../src/store/schema';
import { firstCallsLost } from '../../src/telemetry/metrics';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { TASKS_CAPS } from '../helpers/mcp-client';

let gw: TestGateway;
let db: Kysely<Database>;

beforeAll(async () => {
  gw = await startTestGateway({
    config: {
      tasks: {
        minPollIntervalMs: 50,
        maxPollIntervalMs: 2000,
        maxWatchMs: 60_000,
        pollFailureBudget: 5,
        reconcileEveryMs: 200,
        firstCallLostAfterMs: 1000,
      },
    } as never,
  });
  db = await openDatabase(gw.config.store);
}, 120_000);

afterAll(async () => {
  await db?.destroy();
  await gw?.close();
});

const lostSoFar = async () => (await firstCallsLost.get()).values[0]?.value ?? 0;

test('a first call that takes four times the lost limit is answered, and its claim ends done, never lost', async () => {
  const before = await lostSoFar();
  const claimsBefore = new Set(
    (await db.selectFrom('first_calls').select('task_key').execute()).map((r) => r.task_key),
  );
  const reply = await gw.client.callTool('work', { ms: 4000 }, { capabilities: TASKS_CAPS });
  expect(JSON.stringify(reply.body.result)).toContain('worked 4000 ms');
  const claims = (await db.selectFrom('first_calls').select(['task_key', 'state']).execute()).filter(
    (r) => !claimsBefore.has(r.task_key),
  );
  expect(claims.map((c) => c.state)).toEqual(['done']);
  // Give the reconciler a few more rounds: nothing of this call is declared lost later either.
  await new Promise((r) => setTimeout(r, 1000));
  expect(await lostSoFar()).toBe(before);
}, 60_000);
