/**
 * A hosted call's attempts (src/activities/hosted-call.ts) on the database under test: an attempt that
 * runs after one was lost once it had stored the call's answer (its worker died before the activity
 * completed) returns that answer, for a tool that is not repeatable too, and sends nothing. The upstream
 * is a stand-in counting what is sent: what is under test is the activity's reading of the store
 * (test/integration/hosted-tasks.test.ts runs hosted calls end to end).
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import pino from 'pino';
import { createActivities } from '../../src/activities';
import type { CallHostedToolInput } from '../../src/activities/types';
import { PROTOCOL_VERSION } from '../../src/protocol';
import { Cipher, generateKey } from '../../src/store/cipher';
import { openDatabase } from '../../src/store/database';
import { FirstCalls } from '../../src/store/tasks/first-calls';
import { PayloadStore } from '../../src/store/tasks/payload-store';
import { TaskStore } from '../../src/store/tasks/task-store';
import type { UpstreamClient } from '../../src/upstream/client';
import { testStoreConfig } from '../helpers/store';

test('an attempt after one lost once it stored the answer returns that answer and sends nothing', async () => {
  const db = await openDatabase(await testStoreConfig());
  try {
    const cipher = new Cipher({ activeKeyId: 'k1', keys: { k1: generateKey() } });
    const payloads = new PayloadStore(db, cipher);
    const sent: string[] = [];
    const upstream = {
      send: (_endpoint: unknown, method: string) => {
        sent.push(method);
        return Promise.resolve({
          kind: 'result',
          result: { resultType: 'complete', content: [{ type: 'text', text: 'the answer' }] },
        });
      },
      // Nothing to take up where the upstream keeps a call's stream (a 2026 upstream keeps none).
      resume: () => Promise.resolve(undefined),
    } as unknown as UpstreamClient;
    const activities = createActivities({
      upstream,
      store: new TaskStore(db, cipher),
      payloads,
      firstCalls: new FirstCalls(db),
      resolveUpstream: async () => ({ alias: 'example', url: 'http://upstream.invalid/mcp' }),
      gatewayInfo: { name: 'taskrouter-test', version: '1.0.0' },
      settings: {
        minPollIntervalMs: 50,
        maxPollIntervalMs: 60_000,
        maxWatchMs: 600_000,
        pollFailureBudget: 3,
      },
      logger: pino({ level: 'silent' }),
    });
    const taskKey = 'f'.repeat(64);
    const input: CallHostedToolInput = {
      project: 'p1',
      upstream: 'example',
      principal: { kind: 'anonymous' },
      authorizationId: null,
      taskKey,
      createdAt: new Date().toISOString(),
      repeatable: false,
      call: {
        tool: 'work',
        requestRef: await payloads.put(taskKey, 'request', { relayedMeta: {} }),
        protocolVersion: PROTOCOL_VERSION,
        elicitationForm: false,
        idempotent: false,
      },
    };
    const first = await new MockActivityEnvironment().run(activities.callHostedTool, input);
    expect(first).toMatchObject({ kind: 'result', observation: { status: 'completed' } });
    expect(sent).toEqual(['tools/call']);
    // The attempt Temporal runs after the first one's worker died (its answer stored, its completion lost).
    const again = await new MockActivityEnvironment().run(activities.callHostedTool, input);
    expect(again).toMatchObject({
      kind: 'result',
      resultRef: (first as { resultRef: string }).resultRef,
      observation: { status: 'completed' },
    });
    expect(sent).toEqual(['tools/call']);
  } finally {
    await db.destroy();
  }
});
