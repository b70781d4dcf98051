/**
 * What must never leak, checked where it could: a marker in tool arguments and results never appears in
 * plaintext in the database or in Temporal histories, and the upstream task id never appears in a
 * response, a header, a search attribute, a workflow summary or a log line.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { recordReplies, TASKS_AND_FORM_CAPS } from '../helpers/mcp-client';
import { endedTaskHistory } from '../helpers/task-steps';
import type { Payload } from '@temporalio/common';
import { Cipher } from '../../src/store/cipher';
import { taskKeyOf } from '../../src/store/tasks/task-store';
import { EncryptionCodec } from '../../src/temporal/codec';
import { taskWorkflowId } from '../../src/workflows/messages';

const MARKER = `secret-marker-${randomUUID()}`;
const logs: string[] = [];
let seen: string[] = [];
let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({ logSink: (line) => logs.push(line) });
  seen = recordReplies(gw.client);
});
afterAll(async () => {
  await gw?.close();
});

test('arguments and results never reach the database in plaintext, nor Temporal histories at all', async () => {
  // slow_compute echoes its label in the result and in structuredContent.
  const created = await gw.client.callTool('slow_compute', { seconds: 0.2, label: MARKER });
  const taskId = String(created.body.result?.taskId);
  const done = await gw.client.waitForTask(taskId);
  expect(JSON.stringify(done.result)).toContain(MARKER); // the client does get it

  // Temporal: every event of every run of the task's workflow.
  const history = await endedTaskHistory(gw, taskId);
  const raw = JSON.stringify(history, (_k, v: unknown) =>
    v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v,
  );
  expect(raw.length).toBeGreaterThan(1000);
  expect(raw).not.toContain(MARKER);
  // Stronger: decrypted, the history holds references and metadata only (payloads live in the store).
  const codec = new EncryptionCodec(new Cipher(gw.config.encryption));
  const encoded: Payload[] = [];
  const walk = (v: unknown): void => {
    if (typeof v !== 'object' || v === null || v instanceof Uint8Array) return;
    const p = v as Payload;
    if (p.metadata && p.data instanceof Uint8Array) {
      encoded.push(p);
      return;
    }
    for (const x of Array.isArray(v) ? v : Object.values(v)) walk(x);
  };
  walk(history);
  expect(encoded.length).toBeGreaterThan(5);
  const decoded = (await codec.decode(encoded)).map((p) => Buffer.from(p.data ?? []).toString('utf8'));
  expect(decoded.join('\n')).not.toContain(MARKER);
  expect(decoded.join('\n')).toContain(taskKeyOf(taskId)); // the workflow input, decrypted: it's real

  // Database: the raw SQLite files, or every text/bytea value of the task tables on PostgreSQL.
  const { store } = gw.config;
  if (store.postgresUrl) {
    const db = new pg.Client({ connectionString: store.postgresUrl });
    await db.connect();
    try {
      for (const table of ['tasks', 'task_events']) {
        const rows = await db.query(`SELECT * FROM ${table}`);
        const text = JSON.stringify(rows.rows, (_k, v: unknown) =>
          Buffer.isBuffer(v) ? v.toString('latin1') : v,
        );
        expect(text).not.toContain(MARKER);
      }
    } finally {
      await db.end();
    }
  } else {
    const dir = path.dirname(store.sqliteFile);
    const files = readdirSync(dir).filter((f) => f.startsWith(path.basename(store.sqliteFile)));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(readFileSync(path.join(dir, f)).includes(MARKER)).toBe(false);
  }
});

test('the upstream task id appears in no response, header, search attribute, summary or log line', async () => {
  const created = await gw.client.callTool(
    'confirm_delete',
    { filename: 'x' },
    { capabilities: TASKS_AND_FORM_CAPS },
  );
  const taskId = String(created.body.result?.taskId);
  await gw.client.waitForTask(taskId, (s) => s === 'input_required');
  await gw.client.request('tasks/cancel', { taskId });
  await gw.client.waitForTask(taskId);

  const client = await gw.temporalClient();
  const description = await client.workflow.getHandle(taskWorkflowId(taskKeyOf(taskId))).describe();
  const operatorView = JSON.stringify({
    attributes: description.typedSearchAttributes,
    summary: await description.staticSummary(),
    details: await description.staticDetails(),
    // The current details, as the Web UI reads them (the SDK's built-in metadata query).
    current: await client.workflow.getHandle(description.workflowId).query('__temporal_workflow_metadata'),
  });
  expect(operatorView).toContain('confirm_delete');
  expect(await description.staticDetails()).toMatch(/tool: `confirm_delete`/);
  expect(operatorView).toContain('MCP task status: **cancelled**');
  expect(logs.length).toBeGreaterThan(0);
  for (const upstreamId of gw.upstream.stats.taskIds) {
    expect(seen.join('\n')).not.toContain(upstreamId);
    expect(operatorView).not.toContain(upstreamId);
    expect(logs.join('\n')).not.toContain(upstreamId);
  }
  // Gateway task ids are credentials too: not in logs or the operator's view either.
  expect(logs.join('\n')).not.toContain(taskId);
  expect(operatorView).not.toContain(taskId);
});
