/**
 * The authorization matrix (see authz-matrix.test.ts), the states that take access away, each on a task of
 * its own: an API key revoked, a user token revoked, a direct member removed, an upstream authorization
 * withdrawn. Every method of both eras is then refused as the project or the authorization refuses it, and
 * nothing reaches the upstream.
 */
import type { Subject } from './authz-matrix-gateway';
import { admin, gw, LATE, METHODS, TOKENS, useMatrixGateway } from './authz-matrix-gateway';
import { perform, sessionOf, startTask } from './authz-matrix-calls';

useMatrixGateway();

describe('access taken away: every method of both eras refused, nothing reaches the upstream', () => {
  const cases: Array<[string, Subject, () => Promise<void>, { status: number; code: number }]> = [
    [
      'an API key revoked',
      LATE.key3,
      async () => {
        const keys = (await admin('GET', '/projects/secure/keys')).body as {
          keys: Array<{ id: string; name: string }>;
        };
        const three = keys.keys.find((k) => k.name === 'three');
        expect((await admin('DELETE', `/projects/secure/keys/${three?.id}`)).status).toBe(200);
      },
      { status: 401, code: -31007 },
    ],
    [
      'a user token revoked',
      LATE.frank,
      async () => {
        const tokens = (await admin('GET', '/users/frank/tokens')).body as { tokens: Array<{ id: string }> };
        expect((await admin('DELETE', `/users/frank/tokens/${tokens.tokens[0]?.id}`)).status).toBe(200);
      },
      { status: 401, code: -31007 },
    ],
    [
      'a direct member removed',
      LATE.erin,
      async () => {
        expect((await admin('DELETE', '/projects/secure/members/erin')).status).toBe(204);
      },
      { status: 404, code: -31004 },
    ],
    [
      'the upstream authorization withdrawn',
      LATE.daveWithdrawn,
      async () => {
        const withdrawn = await admin(
          'DELETE',
          '/projects/peruser/upstreams/example/authorization',
          undefined,
          TOKENS.dave,
        );
        expect(withdrawn.status).toBe(200);
      },
      { status: 200, code: -31009 },
    ],
  ];

  test.each(cases)('%s', async (_what, owner, takeAway, refusal) => {
    const taskId = await startTask(owner);
    // The 2025 session is opened while access still holds: taking access away must end it too.
    expect('id' in (await sessionOf(owner))).toBe(true);
    expect((await perform(owner, '2026 tasks/get', taskId)).result?.taskId).toBe(taskId);
    await takeAway();
    const before = { update: gw.upstream.stats.tasksUpdate, cancel: gw.upstream.stats.tasksCancel };
    const failures: string[] = [];
    for (const method of METHODS) {
      const got = await perform(owner, method, taskId);
      if (refusal.status === 200 && method === '2025 tasks/list') {
        // Listing reads the gateway's own records of the caller's tasks, not the upstream: still theirs.
        if (got.status !== 200) failures.push(`${method}: ${JSON.stringify(got)}`);
        continue;
      }
      if (refusal.status === 200 && method === '2026 subscriptions/listen') {
        // A task the caller can no longer follow is left out of the acknowledgement.
        const ack = got.result?.acknowledged as { taskIds?: unknown } | undefined;
        if (JSON.stringify(ack?.taskIds) !== '[]') failures.push(`${method}: ${JSON.stringify(got)}`);
        continue;
      }
      if (got.status !== refusal.status || got.error?.code !== refusal.code || got.result)
        failures.push(`${method}: expected ${refusal.status}/${refusal.code}, got ${JSON.stringify(got)}`);
    }
    expect(failures).toEqual([]);
    expect({ update: gw.upstream.stats.tasksUpdate, cancel: gw.upstream.stats.tasksCancel }).toEqual(before);
  });
});
