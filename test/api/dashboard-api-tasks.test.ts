/**
 * The dashboard's JSON API against the real gateway, what each role reads: the Tasks view (groups, counts,
 * pagination), a task's detail and timeline (safe metadata for every role) and its payload (only the
 * original user caller).
 */
import type { Who } from '../helpers/dashboard';
import { ALICE_INPUT_METADATA, f, MARKER, t, task, UI, useBoardFixture } from './dashboard-api-fixture';

useBoardFixture();

describe('the Tasks view', () => {
  test('team members and direct members list every task, newest first, with counts per group', async () => {
    for (const who of ['alice', 'tess', 'bob'] as Who[]) {
      const reply = await f.api(who).get('/v1/projects/board/tasks');
      expect(reply.status).toBe(200);
      expect(reply.body.tasks.map((x: { ref: string }) => x.ref)).toEqual([
        t.aliceInput,
        t.aliceSlow,
        t.bobSlow,
        t.keySlow,
        t.aliceDone,
      ]);
      expect(reply.body.counts).toEqual({ all: 5, pending: 4, completed: 1, failed: 0, cancelled: 0 });
    }
    const row = (await f.api('bob').get('/v1/projects/board/tasks')).body.tasks[0];
    expect(row).toMatchObject(ALICE_INPUT_METADATA);
    // Metadata only: the arguments and the input request (which names the file) are not in the list.
    expect(JSON.stringify(row)).not.toContain(MARKER);
  });

  test('groups select by status; Pending is working + input_required', async () => {
    const api = f.api('tess');
    const refs = async (q: string) =>
      (await api.get(`/v1/projects/board/tasks?${q}`)).body.tasks.map(
        (x: { ref: string; status: string }) => [x.ref, x.status],
      );
    expect(await refs('group=pending')).toEqual([
      [t.aliceInput, 'input_required'],
      [t.aliceSlow, 'working'],
      [t.bobSlow, 'working'],
      [t.keySlow, 'working'],
    ]);
    expect(await refs('group=completed')).toEqual([[t.aliceDone, 'completed']]);
    expect(await refs('group=failed')).toEqual([]);
    expect((await api.get('/v1/projects/board/tasks?group=done')).status).toBe(400);
    expect((await api.get('/v1/projects/board/tasks?assigned=someone')).status).toBe(400);
  });

  test('pages follow the cursor without repeats; a forged cursor is refused', async () => {
    const api = f.api('alice');
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await api.get(
        `/v1/projects/board/tasks?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(page.body.tasks.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.tasks.map((x: { ref: string }) => x.ref));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual([t.aliceInput, t.aliceSlow, t.bobSlow, t.keySlow, t.aliceDone]);
    expect((await api.get('/v1/projects/board/tasks?cursor=bm9wZQ')).status).toBe(400);
  });
});

describe('detail and timeline: safe metadata for every role', () => {
  test.each(['alice', 'tess', 'bob'] as Who[])('%s sees metadata and the status timeline', async (who) => {
    const detail = await f.api(who).get(task(t.aliceInput));
    expect(detail.status).toBe(200);
    expect(detail.body.task).toMatchObject({ ref: t.aliceInput, ...ALICE_INPUT_METADATA });
    expect(typeof detail.body.task.createdAt).toBe('string');
    expect(typeof detail.body.task.lastUpdatedAt).toBe('string');
    const timeline = await f.api(who).get(task(t.aliceInput, '/timeline'));
    expect(timeline.status).toBe(200);
    expect(timeline.body.timeline.at(-1)).toMatchObject({ kind: 'status', status: 'input_required' });
    expect(detail.body.timeline).toEqual(timeline.body.timeline);
  });

  test('only team members get the workflow link to the Temporal Web UI', async () => {
    const team = (await f.api('tess').get(task(t.keySlow))).body;
    expect(team.workflow.url).toBe(
      `${UI}/namespaces/${f.gw.config.temporal.namespace}/workflows/${team.workflow.id}`,
    );
    expect(team.workflow.id).toMatch(/^task-/);
    expect((await f.api('bob').get(task(t.keySlow))).body.workflow).toBeUndefined();
  });

  test('unknown and malformed task refs are 404', async () => {
    expect((await f.api('alice').get(task('0'.repeat(64)))).status).toBe(404);
    expect((await f.api('alice').get(task('not-a-ref'))).status).toBe(404);
    // A task of another project is not found through this one.
    expect((await f.api('alice').get(`/v1/projects/peruser/tasks/${t.aliceSlow}`)).status).toBe(404);
  });
});

describe('payloads: only the original user caller', () => {
  test('the caller sees arguments and the open input request', async () => {
    const payload = await f.api('alice').get(task(t.aliceInput, '/payload'));
    expect(payload.status).toBe(200);
    expect(payload.body.payload.arguments).toEqual({ filename: MARKER });
    expect(Object.keys(payload.body.payload.inputRequests)).toEqual(['confirm']);
    const detail = (await f.api('alice').get(task(t.aliceInput))).body;
    expect(detail.payload.visible).toBe(true);
    expect(detail.controls).toEqual({ assign: true, cancel: true, answer: true });
  });

  test.each([
    ['tess', 'aliceInput', 'not_caller'],
    ['bob', 'aliceInput', 'not_caller'],
    ['alice', 'bobSlow', 'not_caller'],
    ['alice', 'keySlow', 'api_key'],
    ['tess', 'keySlow', 'api_key'],
    ['bob', 'keySlow', 'api_key'],
  ] as Array<[Who, keyof typeof t, string]>)('%s on %s: hidden (%s)', async (who, name, reason) => {
    const payload = await f.api(who).get(task(t[name], '/payload'));
    expect(payload.status).toBe(403);
    expect(payload.body.error.code).toBe(reason);
    const detail = await f.api(who).get(task(t[name]));
    expect(detail.body.payload).toMatchObject({ visible: false, reason });
    expect(detail.body.controls.cancel).toBe(false);
    expect(detail.body.controls.answer).toBe(false);
    expect(JSON.stringify(detail.body)).not.toContain(MARKER);
  });

  test('a direct member sees the payload of a task they started themselves', async () => {
    const payload = await f.api('bob').get(task(t.bobSlow, '/payload'));
    expect(payload.status).toBe(200);
    expect(payload.body.payload.arguments).toEqual({ seconds: 120, label: 'bob-job' });
    expect((await f.api('bob').get(task(t.bobSlow))).body.controls).toEqual({
      assign: false,
      cancel: true,
      answer: false,
    });
  });
});
