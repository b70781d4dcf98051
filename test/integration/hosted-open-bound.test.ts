/**
 * The bound on a project's open hosted tasks (`fairShare.hosted.openPerProject`, docs/gateway.md "Fair
 * shares"), through the real gateway, a real Temporal dev server and the example upstream, on SQLite and
 * PostgreSQL. Calls waiting for approval are hosted tasks that stay open until someone decides: at the
 * bound the next call is refused (-31013, HTTP 429, a retry delay, the setting named) before anything is
 * stored or sent, another project is not affected, and a decision makes room again.
 */
import { adminCall } from '../helpers/admin-api';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';

const ADMIN = 'admin-hosted-open-bound-0000000000000000';
const KEYS = {
  busy: 'trk_hosted-open-bound-busy-0000000000000',
  calm: 'trk_hosted-open-bound-calm-0000000000000',
};
const POLICY = { rules: [{ tools: ['greet'] }] };

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test reads of JSON bodies
type Json = Record<string, any>;

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({
    config: { admin: { token: ADMIN }, fairShare: { hosted: { openPerProject: 2 } } },
    projects: () => [],
    bootstrap: (url) => ({
      users: [{ handle: 'alice' }],
      teams: [{ slug: 'ops', members: ['alice'] }],
      projects: (['busy', 'calm'] as const).map((slug) => ({
        slug,
        team: 'ops',
        namespacing: false,
        apiKeys: [{ name: 'agent', key: KEYS[slug] }],
        upstreams: [{ alias: 'example', url }],
        approvals: POLICY,
      })),
    }),
  });
}, 180_000);
afterAll(async () => {
  await gw?.close();
});

const greet = (slug: 'busy' | 'calm', name: string) =>
  gw.clientFor(slug).withToken(KEYS[slug]).callTool('greet', { name });

async function pending(slug: string): Promise<Json[]> {
  const reply = await adminCall(gw.client.url, ADMIN, 'GET', `/approvals?project=${slug}&status=pending`);
  return (reply.body as Json).approvals as Json[];
}

test('at the bound the next hosted task is refused before anything is stored; another project is not affected; a decision makes room', async () => {
  for (const name of ['one', 'two']) {
    const reply = await greet('busy', name);
    expect(reply.body.result).toMatchObject({ resultType: 'task', status: 'working' });
  }
  const refused = await greet('busy', 'three');
  expect(refused.status).toBe(429);
  expect(refused.body.error).toMatchObject({
    code: -31013,
    data: { limit: 'fairShare.hosted.openPerProject', retryAfterMs: 10_000 },
  });
  expect(String(refused.body.error?.message)).toMatch(/at most 2 hosted tasks of one project/);
  // Nothing of the refused call exists: no approval request, no task, nothing sent.
  expect(await pending('busy')).toHaveLength(2);
  expect(gw.upstream.stats.calls.filter((c) => c.tool === 'greet')).toHaveLength(0);

  // Another project on the same upstream: its own bound.
  const calm = await greet('calm', 'elsewhere');
  expect(calm.body.result).toMatchObject({ resultType: 'task', status: 'working' });

  // A denial ends one of the busy project's tasks: there is room for one more.
  const [first] = await pending('busy');
  const denied = await adminCall(gw.client.url, ADMIN, 'POST', `/approvals/${String(first?.id)}/deny`, {
    comment: 'not now',
  });
  expect(denied.status).toBe(200);
  // The denied task ends a moment after the decision (its workflow writes the request, then the task).
  let again = await greet('busy', 'four');
  for (let i = 0; i < 50 && again.status === 429; i++) {
    await new Promise((r) => setTimeout(r, 100));
    again = await greet('busy', `four-${i}`);
  }
  expect(again.body.result).toMatchObject({ resultType: 'task', status: 'working' });
  expect(await pending('busy')).toHaveLength(2);
});
