/**
 * Retention through the real schedules on the shared dev server (short TTLs): payload expiry answers
 * tasks/get with -32602 "expired" while metadata and history remain; the metadata purge then removes
 * them; a purge survives its worker being stopped in the middle of the run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { adminCliEnv, runAdminCli } from '../helpers/admin-cli';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { taskKeyOf } from '../../src/store/tasks/task-store';
import type { RetentionWorkflowResult } from '../../src/workflows/messages';

const ADMIN_TOKEN = 'retention-admin-token-0123456789';
const PAYLOAD_TTL_MS = 2_000;
const METADATA_TTL_MS = 6_000;

let gw: TestGateway;
let temporal: Client;

beforeAll(async () => {
  gw = await startTestGateway({
    config: {
      admin: { token: ADMIN_TOKEN },
      retention: {
        payloadTtlMs: PAYLOAD_TTL_MS,
        metadataTtlMs: METADATA_TTL_MS,
        batchSize: 2,
        batchPauseMs: 500,
      },
    },
  });
  temporal = await gw.temporalClient();
});
afterAll(async () => {
  await gw?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function runRetention(kind: 'payloads' | 'metadata') {
  const res = await fetch(`${gw.runtime().url}/v1/admin/retention/run`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ kind }),
  });
  expect(res.status).toBe(202);
  const body = (await res.json()) as { workflowId: string; started: boolean };
  expect(body).toMatchObject({ started: true, workflowId: expect.stringContaining(`retention-${kind}`) });
  return body.workflowId;
}

async function createTasks(n: number, seconds: number): Promise<string[]> {
  const replies = await Promise.all(
    Array.from({ length: n }, (_, i) => gw.client.callTool('slow_compute', { seconds, label: `r${i}` })),
  );
  return replies.map((r) => {
    expect(r.body.result?.resultType).toBe('task');
    return String(r.body.result?.taskId);
  });
}

test('the admin endpoint is for the administrator and validates the kind', async () => {
  const post = (body: unknown, token = ADMIN_TOKEN) =>
    fetch(`${gw.runtime().url}/v1/admin/retention/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  expect((await post({ kind: 'everything' })).status).toBe(400);
  expect((await post({ kind: 'payloads', extra: 1 })).status).toBe(400);
  expect((await post({ kind: 'payloads' }, 'not-the-token-at-all')).status).toBe(401);
});

test('payloads expire first (tasks/get -32602 "expired", metadata kept), then metadata goes', async () => {
  const store = gw.runtime().store;
  const done = await createTasks(3, 0.1);
  const [running] = await createTasks(1, 60);
  for (const id of done) await gw.client.waitForTask(id);
  await sleep(PAYLOAD_TTL_MS + 500);

  const payloadRun = await runRetention('payloads');
  const payloadResult = (await temporal.workflow.getHandle(payloadRun).result()) as RetentionWorkflowResult;
  expect(payloadResult).toMatchObject({ kind: 'payloads' });
  expect(payloadResult.purged).toBeGreaterThanOrEqual(3);

  for (const id of done) {
    const reply = await gw.client.getTask(id);
    expect(reply.body.error).toEqual({ code: -32602, message: expect.stringMatching(/expired/) });
    const task = await store.getTask(taskKeyOf(id));
    expect(task).toMatchObject({ payloadExpired: true, snapshot: { status: 'completed' } });
    expect(task?.snapshot).not.toHaveProperty('result');
    expect((await store.listEvents(taskKeyOf(id))).length).toBeGreaterThanOrEqual(2);
  }
  // A running task keeps its payload.
  expect((await gw.client.getTask(running!)).body.result).toMatchObject({ status: 'working' });

  const created = Date.parse(String((await store.getTask(taskKeyOf(done[0]!)))?.snapshot.createdAt));
  await sleep(Math.max(0, created + METADATA_TTL_MS + 500 - Date.now()));
  const metadataRun = await runRetention('metadata');
  const metadataResult = (await temporal.workflow.getHandle(metadataRun).result()) as RetentionWorkflowResult;
  expect(metadataResult.purged).toBeGreaterThanOrEqual(3);
  for (const id of done) {
    expect(await store.getTask(taskKeyOf(id))).toBeUndefined();
    expect(await store.listEvents(taskKeyOf(id))).toEqual([]);
    expect((await gw.client.getTask(id)).body.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/not found/),
    });
  }
  expect(await store.getTask(taskKeyOf(running!))).toBeDefined();
  await gw.client.request('tasks/cancel', { taskId: running! });
  await gw.client.waitForTask(running!);
});

test('a purge whose worker stops mid-run completes after the worker is back', async () => {
  const ids = await createTasks(10, 0.1);
  for (const id of ids) await gw.client.waitForTask(id);
  await sleep(PAYLOAD_TTL_MS + 500);

  const expired = async () => {
    let n = 0;
    for (const id of ids) if ((await gw.runtime().store.getTask(taskKeyOf(id)))?.payloadExpired) n++;
    return n;
  };
  const run = await runRetention('payloads');
  // Batches of 2 with 500 ms pauses: stop everything once the first batch is in.
  const deadline = Date.now() + 20_000;
  while ((await expired()) === 0 && Date.now() < deadline) await sleep(50);
  const before = await expired();
  await gw.stop();
  expect(before).toBeGreaterThan(0);
  expect(before).toBeLessThan(ids.length);
  await sleep(1_000);
  await gw.start();

  const result = (await temporal.workflow.getHandle(run).result()) as RetentionWorkflowResult;
  expect(result.purged).toBeGreaterThanOrEqual(ids.length);
  expect(await expired()).toBe(ids.length);
});

test('the CLI triggers a run through the schedule', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-retention-cli-'));
  try {
    const { store, encryption, temporal: t } = gw.config;
    const env = adminCliEnv(path.join(dir, 'config.json'), { store, encryption, temporal: t });
    const out = await runAdminCli(['retention', 'run', '--kind', 'metadata'], env);
    expect(out).toMatchObject({ code: 0 });
    const run = JSON.parse(out.stdout) as { workflowId: string; started: boolean };
    expect(run).toMatchObject({ started: true, workflowId: expect.stringContaining('retention-metadata') });
    expect(await temporal.workflow.getHandle(run.workflowId).result()).toMatchObject({ kind: 'metadata' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
