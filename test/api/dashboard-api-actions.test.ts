/**
 * The dashboard's JSON API against the real gateway, what each role may do and what changes when access
 * goes: assignment (team members only, granting nothing), the protocol controls (answer, cancel) of the
 * original user caller, a revoked upstream authorization, payload expiry and a member removed from the
 * project. The tests run in order on the same five tasks: assignments first, then the controls end them.
 */
import type { Who } from '../helpers/dashboard';
import { TOKENS, waitForDetail } from '../helpers/dashboard';
import { taskWorkflowId } from '../../src/workflows/messages';
import { f, MARKER, t, task, useBoardFixture } from './dashboard-api-fixture';

useBoardFixture();

describe('assignment: team members only, and it grants nothing', () => {
  test('a direct member cannot assign', async () => {
    const reply = await f.api('bob').send('PUT', task(t.aliceSlow, '/assignee'), { assignee: 'bob' });
    expect(reply.status).toBe(403);
    const detail = (await f.api('bob').get(task(t.aliceSlow))).body;
    expect(detail.task.assignee).toBeNull();
    expect(detail.controls.assign).toBe(false);
  });

  test('assign, reassign and unassign show in the timeline; the status never changes', async () => {
    const before = (await f.api('alice').get(task(t.aliceInput))).body;
    expect(
      (await f.api('alice').send('PUT', task(t.aliceInput, '/assignee'), { assignee: 'bob' })).body,
    ).toEqual({
      assignee: { handle: 'bob', name: 'Bob' },
    });
    expect(
      (await f.api('tess').send('PUT', task(t.aliceInput, '/assignee'), { assignee: 'tess' })).status,
    ).toBe(200);
    const after = (await f.api('bob').get(task(t.aliceInput))).body;
    expect(after.task.status).toBe(before.task.status);
    expect(after.task.assignee.handle).toBe('tess');
    expect(after.timeline.slice(-2)).toEqual([
      expect.objectContaining({
        kind: 'assignment',
        by: { handle: 'alice', name: 'Alice' },
        assignee: { handle: 'bob', name: 'Bob' },
      }),
      expect.objectContaining({
        kind: 'assignment',
        by: { handle: 'tess', name: 'Tess' },
        assignee: { handle: 'tess', name: 'Tess' },
      }),
    ]);
    // Each change is in the project's audit trail, by whom and to whom; a repeat writes nothing.
    expect(
      (await f.api('tess').send('PUT', task(t.aliceInput, '/assignee'), { assignee: 'tess' })).status,
    ).toBe(200);
    const audit = (await f.admin('GET', '/projects/board/audit')).body.events as Array<{
      action: string;
      detail?: { workflowId?: string; assignee?: string };
    }>;
    const ofTask = audit.filter(
      (e) => e.action === 'task.assigned' && e.detail?.workflowId === taskWorkflowId(t.aliceInput),
    );
    expect(ofTask).toHaveLength(2);
    expect(after.timeline.filter((e: { kind: string }) => e.kind === 'assignment')).toHaveLength(2);
    // The MCP view of the task is untouched.
    expect(after.timeline.filter((e: { kind: string }) => e.kind === 'status')).toEqual(
      before.timeline.filter((e: { kind: string }) => e.kind === 'status'),
    );
  });

  test('Assigned filter: tasks with a human assignee, and "assigned to me"', async () => {
    await f.api('alice').send('PUT', task(t.keySlow, '/assignee'), { assignee: 'bob' });
    const any = (await f.api('bob').get('/v1/projects/board/tasks?assigned=any')).body;
    expect(any.tasks.map((x: { ref: string }) => x.ref)).toEqual([t.aliceInput, t.keySlow]);
    expect(any.counts).toEqual({ all: 2, pending: 2, completed: 0, failed: 0, cancelled: 0 });
    const mine = (await f.api('bob').get('/v1/projects/board/tasks?assigned=me')).body;
    expect(mine.tasks.map((x: { ref: string }) => x.ref)).toEqual([t.keySlow]);
    expect(
      (await f.api('tess').get('/v1/projects/board/tasks?assigned=me&group=pending')).body.tasks,
    ).toHaveLength(1);
  });

  test('assigning grants neither the payload nor the controls', async () => {
    // bob is the assignee of an API-key task and (above) was of alice's task.
    await f.api('alice').send('PUT', task(t.aliceSlow, '/assignee'), { assignee: 'bob' });
    for (const name of ['keySlow', 'aliceSlow'] as const) {
      expect((await f.api('bob').get(task(t[name], '/payload'))).status).toBe(403);
      expect((await f.api('bob').send('POST', task(t[name], '/cancel'))).status).toBe(403);
    }
  });

  test('only people with access to the project can be assignees; bad bodies are refused', async () => {
    const api = f.api('alice');
    const olga = await api.send('PUT', task(t.aliceDone, '/assignee'), { assignee: 'olga' });
    expect(olga.status).toBe(400);
    expect(olga.body.error.message).toBe('"olga" cannot access project "board"');
    expect((await api.send('PUT', task(t.aliceDone, '/assignee'), { assignee: 3 })).status).toBe(400);
    expect((await api.send('PUT', task(t.aliceDone, '/assignee'), { who: 'bob' })).status).toBe(400);
    const raw = await fetch(`${f.baseUrl}${task(t.aliceDone, '/assignee')}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TOKENS.alice}`, 'content-type': 'application/json' },
      body: '{"assignee":',
    });
    expect(raw.status).toBe(400);
    const huge = await api.send('PUT', task(t.aliceDone, '/assignee'), { assignee: 'x'.repeat(300_000) });
    expect(huge.status).toBe(413);
    expect((await api.send('PUT', task(t.aliceDone, '/assignee'), { assignee: null })).status).toBe(200);
    expect((await api.send('DELETE', task(t.aliceDone, '/assignee'))).status).toBe(405);
  });
});

describe('protocol controls: the original user caller only, through the tasks/update and tasks/cancel path', () => {
  test('others cannot answer input or cancel; nothing reaches the upstream', async () => {
    const updates = f.gw.upstream.stats.tasksUpdate;
    const cancels = f.gw.upstream.stats.tasksCancel;
    const answer = { inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } };
    for (const who of ['tess', 'bob'] as Who[]) {
      expect((await f.api(who).send('POST', task(t.aliceInput, '/input'), answer)).status).toBe(403);
      expect((await f.api(who).send('POST', task(t.aliceSlow, '/cancel'))).status).toBe(403);
    }
    for (const who of ['alice', 'tess', 'bob'] as Who[]) {
      expect((await f.api(who).send('POST', task(t.keySlow, '/cancel'))).status).toBe(403);
    }
    expect((await f.api('olga').send('POST', task(t.aliceSlow, '/cancel'))).status).toBe(404);
    expect(f.gw.upstream.stats.tasksUpdate).toBe(updates);
    expect(f.gw.upstream.stats.tasksCancel).toBe(cancels);
    expect((await f.api('alice').get(task(t.aliceSlow))).body.task.status).toBe('working');
  });

  test('the caller answers the elicitation and the task completes with the answer', async () => {
    const api = f.api('alice');
    expect((await api.send('POST', task(t.aliceInput, '/input'), { inputResponses: {} })).status).toBe(400);
    expect(
      (
        await api.send('POST', task(t.aliceInput, '/input'), {
          inputResponses: { confirm: { action: 'maybe' } },
        })
      ).status,
    ).toBe(400);
    const reply = await api.send('POST', task(t.aliceInput, '/input'), {
      inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
    });
    expect(reply.status).toBe(202);
    const done = await waitForDetail(api, task(t.aliceInput), (b) => b.task.status === 'completed');
    expect(done.payload.result.content[0].text).toBe(`Confirmed: deleted ${MARKER}`);
    expect(done.controls).toEqual({ assign: true, cancel: false, answer: false });
  });

  test('a direct member cancels their own task; the caller cancels theirs', async () => {
    const cancels = f.gw.upstream.stats.tasksCancel;
    expect((await f.api('bob').send('POST', task(t.bobSlow, '/cancel'))).status).toBe(202);
    expect((await f.api('alice').send('POST', task(t.aliceSlow, '/cancel'))).status).toBe(202);
    await waitForDetail(f.api('bob'), task(t.bobSlow), (b) => b.task.status === 'cancelled');
    await waitForDetail(f.api('alice'), task(t.aliceSlow), (b) => b.task.status === 'cancelled');
    expect(f.gw.upstream.stats.tasksCancel).toBe(cancels + 2);
    // Cancelling a finished task changes nothing and is refused as a control that no longer applies.
    expect((await f.api('alice').send('POST', task(t.aliceSlow, '/cancel'))).status).toBe(403);
  });
});

describe('the original caller after their upstream authorization is revoked', () => {
  test('payload hidden and controls refused; the upstream hears nothing', async () => {
    const grant = await f.admin('PUT', '/projects/peruser/upstreams/example/authorization', {
      user: 'alice',
      credential: 'alice-upstream-secret',
    });
    expect(grant.status).toBe(200);
    const { ref } = await f.startTask(
      'alice',
      'slow_compute',
      { seconds: 120, label: 'per-user' },
      {
        project: 'peruser',
      },
    );
    const route = `/v1/projects/peruser/tasks/${ref}`;
    expect((await f.api('alice').get(`${route}/payload`)).status).toBe(200);
    expect((await f.api('alice').get(route)).body.controls.cancel).toBe(true);

    const revoke = await f.admin('DELETE', '/projects/peruser/upstreams/example/authorization?user=alice');
    expect(revoke.status).toBe(200);
    const cancels = f.gw.upstream.stats.tasksCancel;
    const payload = await f.api('alice').get(`${route}/payload`);
    expect(payload.status).toBe(403);
    expect(payload.body.error.code).toBe('authorization_invalid');
    const detail = (await f.api('alice').get(route)).body;
    expect(detail.payload).toMatchObject({ visible: false, reason: 'authorization_invalid' });
    expect(detail.controls).toEqual({ assign: true, cancel: false, answer: false });
    // Metadata stays visible. The task's watch may already have ended it: without the revoked credential
    // it cannot poll the upstream (a race with the next poll, 100 ms apart here).
    expect(detail.task).toMatchObject({ tool: 'slow_compute' });
    expect(['working', 'failed']).toContain(detail.task.status);
    const cancel = await f.api('alice').send('POST', `${route}/cancel`);
    expect(cancel.status).toBe(403);
    expect(cancel.body.error.message).toMatch(/authorization/);
    expect(f.gw.upstream.stats.tasksCancel).toBe(cancels);
  });
});

describe('metadata lifetime', () => {
  test('after payload expiry the dashboard says so, and the metadata and timeline stay', async () => {
    // Payload retention with a cutoff in the future: every finished task's payload expires.
    await f.gw.runtime().store.purgePayloadsBefore(new Date(Date.now() + 60_000).toISOString(), 1000);
    const detail = await f.api('alice').get(task(t.aliceDone));
    expect(detail.status).toBe(200);
    expect(detail.body.task).toMatchObject({
      tool: 'slow_compute',
      status: 'completed',
      payloadExpired: true,
    });
    expect(detail.body.payload).toMatchObject({ visible: false, reason: 'expired' });
    expect(detail.body.payload.message).toMatch(/payload has expired/);
    expect(detail.body.timeline.length).toBeGreaterThan(0);
    const payload = await f.api('alice').get(task(t.aliceDone, '/payload'));
    expect(payload.status).toBe(410);
    expect(payload.body.error.code).toBe('expired');
    // Others still get their own reason, not "expired".
    expect((await f.api('tess').get(task(t.aliceDone, '/payload'))).body.error.code).toBe('not_caller');
  });
});

describe('losing project access', () => {
  test('a caller removed from the project sees nothing of it, their own tasks included', async () => {
    const { ref } = await f.startTask('bob', 'slow_compute', { seconds: 120, label: 'bob-later' });
    expect((await f.api('bob').get(task(ref, '/payload'))).status).toBe(200);
    expect((await f.admin('DELETE', '/projects/board/members/bob')).status).toBe(204);
    const cancels = f.gw.upstream.stats.tasksCancel;
    for (const route of [
      task(ref),
      task(ref, '/payload'),
      task(ref, '/timeline'),
      '/v1/projects/board/tasks',
    ]) {
      expect((await f.api('bob').get(route)).status).toBe(404);
    }
    expect((await f.api('bob').send('POST', task(ref, '/cancel'))).status).toBe(404);
    expect(f.gw.upstream.stats.tasksCancel).toBe(cancels);
    // The team still sees the task. (Whether it is still working depends on timing: bob's upstream
    // credential no longer resolves, so the next poll ends it as failed.)
    const seen = await f.api('tess').get(task(ref));
    expect(seen.status).toBe(200);
    expect(['working', 'failed']).toContain(seen.body.task.status);
  });
});
