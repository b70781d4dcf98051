/**
 * Project deletion as a workflow, on the shared dev server: with tasks in flight on the example upstream,
 * DELETE /v1/admin/projects/{p} stops the project serving at once, asks the upstream to cancel each task,
 * ends the task workflows, and removes task rows, history, keys and upstreams.
 */
import type { Client } from '@temporalio/client';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { taskKeyOf } from '../../src/store/tasks/task-store';

const ADMIN_TOKEN = 'deletion-admin-token-0123456789';

let gw: TestGateway;
let temporal: Client;

beforeAll(async () => {
  gw = await startTestGateway({
    config: { admin: { token: ADMIN_TOKEN } },
    projects: (url) => [
      { slug: 'doomed', authMode: 'required', namespacing: false, upstreams: [{ alias: 'example', url }] },
    ],
  });
  temporal = await gw.temporalClient();
});
afterAll(async () => {
  await gw?.close();
});

function admin(method: string, path: string, body?: unknown) {
  return fetch(`${gw.runtime().url}/v1/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
}

test('deleting a project with tasks in flight cancels them upstream and removes everything', async () => {
  const store = gw.runtime().store;
  const keyReply = await admin('POST', '/projects/doomed/keys', { name: 'ci' });
  expect(keyReply.status).toBe(201);
  const { key } = (await keyReply.json()) as { key: string };
  const client = gw.clientFor('doomed').withToken(key);

  const replies = await Promise.all(
    [1, 2, 3].map((i) => client.callTool('slow_compute', { seconds: 30, label: `d${i}` })),
  );
  const ids = replies.map((r) => {
    expect(r.body.result).toMatchObject({ resultType: 'task', status: 'working' });
    return String(r.body.result?.taskId);
  });
  const workflowIds: string[] = [];
  for (const id of ids) {
    const task = await store.getTask(taskKeyOf(id));
    expect(task).toBeDefined();
    workflowIds.push(task!.workflowId);
  }
  const cancelsBefore = gw.upstream.stats.tasksCancel;

  const del = await admin('DELETE', '/projects/doomed');
  expect(del.status).toBe(202);
  const { deletion } = (await del.json()) as { deletion: { workflowId: string } };
  expect(deletion.workflowId).toMatch(/^project-deletion-prj_/);

  // The project stops serving at once: its key no longer authenticates, the endpoint is gone.
  expect((await client.callTool('greet', { name: 'x' })).status).toBe(401);
  expect([401, 404]).toContain((await gw.clientFor('doomed').callTool('greet', { name: 'x' })).status);
  // A repeated request joins the running deletion.
  const again = await admin('DELETE', '/projects/doomed');
  if (again.status === 202) {
    expect(((await again.json()) as { deletion: { workflowId: string } }).deletion.workflowId).toBe(
      deletion.workflowId,
    );
  } else {
    expect(again.status).toBe(404); // already finished
  }

  await temporal.workflow.getHandle(deletion.workflowId).result();

  expect(gw.upstream.stats.tasksCancel - cancelsBefore).toBeGreaterThanOrEqual(3);
  for (const wid of workflowIds) {
    const status = (await temporal.workflow.getHandle(wid).describe()).status.name;
    expect(status).not.toBe('RUNNING');
  }
  for (const id of ids) {
    expect(await store.getTask(taskKeyOf(id))).toBeUndefined();
    expect(await store.listEvents(taskKeyOf(id))).toEqual([]);
  }
  expect((await admin('GET', '/projects/doomed')).status).toBe(404);
  expect((await client.callTool('greet', { name: 'x' })).status).toBe(401);
  const trail = (await (await admin('GET', '/audit?limit=20')).json()) as {
    events: Array<{ action: string }>;
  };
  expect(trail.events.map((e) => e.action)).toEqual(
    expect.arrayContaining(['project.deletion_started', 'project.deleted']),
  );

  // Other projects are untouched.
  expect((await gw.client.callTool('greet', { name: 'Ada' })).body.result).toMatchObject({
    resultType: 'complete',
  });
});
