/**
 * The admin CLI's approval commands (`taskrouter admin approvals ...`, `approval-policy ...`) as child
 * processes on the store and Temporal of a real gateway, on SQLite and PostgreSQL: the policy set from a
 * file and inline, read and removed (its version counting every change); a waiting call listed, shown with
 * its arguments, approved (exactly one call reaches the upstream) or denied (the task fails saying who and
 * why, nothing sent); bad input and refusals with their exit codes.
 */
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CliOutcome } from '../helpers/admin-cli';
import { adminCliEnv, runAdminCli } from '../helpers/admin-cli';
import { adminCall } from '../helpers/admin-api';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { approvalDigest } from '../helpers/approval-digest';

// Every command is a fresh Node process loading TypeScript through tsx (~1 s each, more on a busy box).
jest.setTimeout(180_000);

const KEY = 'trk_approvals-cli-project-key-0000000000';
const ADMIN = 'admin-approvals-cli-00000000000000000000';

let gw: TestGateway;
let dir: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  gw = await startTestGateway({
    config: { admin: { token: ADMIN } },
    projects: () => [],
    bootstrap: (url) => ({
      users: [{ handle: 'alice' }],
      teams: [{ slug: 'ops', members: ['alice'] }],
      projects: [
        {
          slug: 'guarded',
          team: 'ops',
          namespacing: false,
          apiKeys: [{ name: 'agent', key: KEY }],
          upstreams: [{ alias: 'example', url }],
        },
      ],
    }),
  });
  dir = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-approvals-cli-'));
  const { store, encryption, temporal } = gw.config;
  env = adminCliEnv(path.join(dir, 'config.json'), { store, encryption, temporal });
}, 180_000);
afterAll(async () => {
  await gw?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function cli(...args: string[]): Promise<CliOutcome> {
  return runAdminCli(args, env);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON output, inspected field by field
async function ok(...args: string[]): Promise<any> {
  const out = await cli(...args);
  if (out.code !== 0) throw new Error(`admin ${args.join(' ')} exited ${out.code}: ${out.stderr}`);
  return JSON.parse(out.stdout);
}

const client = () => gw.clientFor('guarded').withToken(KEY);
const sha = (args: Record<string, unknown>) => approvalDigest(gw, args);
const callsOf = (name: string) =>
  gw.upstream.stats.calls.filter(
    (c) => c.tool === 'greet' && (c.arguments as { name?: string }).name === name,
  );

/**
 * Calls `greet` until the gateway serves the policy the CLI wrote (it checks for changes every 250 ms):
 * each try has its own name, so the one that waits is the only call with its name. Returns its task id
 * and its name.
 */
async function waitingCall(prefix: string): Promise<{ taskId: string; name: string }> {
  for (let i = 0; i < 50; i++) {
    const name = `${prefix}-${i}`;
    const reply = await client().callTool('greet', { name });
    const result = reply.body.result;
    if (result?.resultType === 'task' && result.status === 'working') {
      expect(String(result.statusMessage)).toMatch(/^Waiting for approval: greet on example/);
      return { taskId: String(result.taskId), name };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the gateway did not serve the policy the CLI set');
}

/**
 * A waiting call's approval request opened under the policy the test just set: a call that waits may have
 * been opened under the previous test's policy (also gating `greet`) before the gateway served the new
 * one, so calls are made until the listed request is what `current` expects.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON output, inspected field by field
async function waitingRequest(prefix: string, current: (request: any) => boolean) {
  for (let i = 0; i < 20; i++) {
    const { taskId, name } = await waitingCall(`${prefix}-${i}`);
    const pending = await ok('approvals', 'list', '--project', 'guarded', '--status', 'pending');
    const request = pending.find((a: { argumentsSha256: string }) => a.argumentsSha256 === sha({ name }));
    if (request && current(request)) return { taskId, name, request };
  }
  throw new Error('no request opened under the policy the test set');
}

test('approval-policy set from a file and inline, get, remove; bad input named', async () => {
  expect(await ok('approval-policy', 'get', 'guarded')).toEqual({
    project: 'guarded',
    policy: null,
    version: 0,
  });
  const file = path.join(dir, 'policy.json');
  writeFileSync(file, JSON.stringify({ rules: [{ tools: ['greet'] }], expiresAfterMs: 600_000 }));
  const set = await ok('approval-policy', 'set', 'guarded', '--file', file);
  expect(set).toMatchObject({
    project: 'guarded',
    version: 1,
    policy: { rules: [{ upstream: '*', tools: ['greet'] }], approvers: { managers: true }, required: 1 },
  });
  // Restating the same policy changes nothing; another one counts a version.
  expect((await ok('approval-policy', 'set', 'guarded', '--file', file)).version).toBe(1);
  const inline = await ok(
    'approval-policy',
    'set',
    'guarded',
    '--policy',
    '{"rules":[{"upstream":"example","tools":["greet"]}],"approvers":{"users":["alice"]}}',
  );
  expect(inline.version).toBe(2);
  expect(inline.policy.approvers.users).toHaveLength(1);
  expect(inline.policy.approvers.users[0]).not.toBe('alice'); // stored as the user's id
  expect(await ok('approval-policy', 'get', 'guarded')).toEqual(inline);

  const invalid = await cli('approval-policy', 'set', 'guarded', '--policy', '{"rules":[]}');
  expect(invalid.code).toBe(1);
  expect(invalid.stderr).toMatch(/Invalid approval policy: .* at rules \(invalid\)/);
  const notJson = await cli('approval-policy', 'set', 'guarded', '--policy', '{rules');
  expect(notJson.code).toBe(2);
  expect(notJson.stderr).toContain('--policy must be JSON');
  const both = await cli('approval-policy', 'set', 'guarded', '--file', file, '--policy', '{}');
  expect(both.code).toBe(2);
  expect(both.stderr).toContain('needs --file F or --policy JSON');
  const noProject = await cli('approval-policy', 'get');
  expect(noProject.code).toBe(2);
  expect(noProject.stderr).toContain('which project?');
  const unknown = await cli('approval-policy', 'get', 'nope');
  expect(unknown.code).toBe(1);
  expect(unknown.stderr).toContain('(not_found)');

  const removed = await ok('approval-policy', 'remove', 'guarded');
  expect(removed).toEqual({ project: 'guarded', policy: null, version: 3 });
  const audit = await ok('audit', '--project', 'guarded');
  expect(audit.map((e: { action: string }) => e.action)).toEqual(
    expect.arrayContaining(['approval_policy.set', 'approval_policy.removed']),
  );
});

test('a waiting call listed and shown with its arguments; approve sends exactly one call', async () => {
  await ok('approval-policy', 'set', 'guarded', '--policy', '{"rules":[{"tools":["greet"]}]}');
  const { taskId, name } = await waitingCall('Ada');
  expect(callsOf(name)).toHaveLength(0);

  const pending = await ok('approvals', 'list', '--project', 'guarded', '--status', 'pending');
  const listed = pending.find((a: { argumentsSha256: string }) => a.argumentsSha256 === sha({ name }));
  expect(listed).toMatchObject({ project: 'guarded', upstream: 'example', tool: 'greet', mayDecide: true });
  expect(listed.arguments).toBeUndefined(); // a listing never carries arguments
  const shown = await ok('approvals', 'show', listed.id);
  expect(shown).toMatchObject({ id: listed.id, status: 'pending', arguments: { name } });

  const approved = await ok('approvals', 'approve', listed.id, '--comment', 'looks fine');
  expect(approved).toEqual({ id: listed.id, status: 'approved', approvals: 1, required: 1 });
  const done = await client().waitForTask(taskId);
  expect(done).toMatchObject({ status: 'completed' });
  expect(JSON.stringify(done.result)).toContain(`Hello, ${name}!`);
  expect(callsOf(name).map((c) => c.arguments)).toEqual([{ name }]);
  const after = await ok('approvals', 'show', listed.id);
  expect(after).toMatchObject({ status: 'approved', mayDecide: false });
  expect(after.decisions).toEqual([
    expect.objectContaining({ byName: 'administrator', decision: 'approve', comment: 'looks fine' }),
  ]);

  // Approving again: refused (exit 1, the conflict named), nothing more sent.
  const again = await cli('approvals', 'approve', listed.id);
  expect(again.code).toBe(1);
  expect(again.stderr).toMatch(/already approved \(conflict\)/);
  expect(callsOf(name)).toHaveLength(1);
  const approvedList = await ok('approvals', 'list', '--status', 'approved');
  expect(approvedList.map((a: { id: string }) => a.id)).toContain(listed.id);
});

test('deny needs a comment; the task fails saying who denied and why; nothing is sent', async () => {
  const { taskId, name } = await waitingCall('Dee');
  const pending = await ok('approvals', 'list', '--project', 'guarded', '--status', 'pending');
  const id = pending.find((a: { argumentsSha256: string }) => a.argumentsSha256 === sha({ name })).id;
  const bare = await cli('approvals', 'deny', id);
  expect(bare.code).toBe(2);
  expect(bare.stderr).toContain('--comment is required');
  expect(await ok('approvals', 'deny', id, '--comment', 'not today')).toMatchObject({ id, status: 'denied' });
  const done = await client().waitForTask(taskId);
  expect(done).toMatchObject({ status: 'failed' });
  expect(JSON.stringify(done)).toContain('Denied by administrator: not today');
  expect(callsOf(name)).toHaveLength(0);
  const audit = await ok('audit', '--project', 'guarded');
  expect(audit.map((e: { action: string }) => e.action)).toEqual(
    expect.arrayContaining([
      'approval.requested',
      'approval.approved',
      'approval.denied',
      'approval.refused',
    ]),
  );
});

test('where the policy does not name managers, the administrator may not decide either', async () => {
  await ok(
    'approval-policy',
    'set',
    'guarded',
    '--policy',
    '{"rules":[{"tools":["greet"]}],"approvers":{"managers":false,"users":["alice"]}}',
  );
  const { name, request } = await waitingRequest('Eve', (r) => r.mayDecide === false);
  // The administrator manages the project: sees the request, not its arguments, and may not decide.
  expect(request.mayDecide).toBe(false);
  expect((await ok('approvals', 'show', request.id)).arguments).toBeUndefined();
  const refused = await cli('approvals', 'approve', request.id);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/may not decide .*\(forbidden\)/);
  expect(callsOf(name)).toHaveLength(0);
});

test('the administrator is one approver, by the CLI or the admin API: it cannot meet required 2 alone', async () => {
  await ok('approval-policy', 'set', 'guarded', '--policy', '{"rules":[{"tools":["greet"]}],"required":2}');
  const { name, request } = await waitingRequest('Two', (r) => r.required === 2);
  const id = String(request.id);
  expect(await ok('approvals', 'approve', id)).toEqual({ id, status: 'pending', approvals: 1, required: 2 });
  // The same person through the admin API (`admin:api`, where the CLI was `admin:cli`): refused.
  const again = await adminCall(gw.client.url, ADMIN, 'POST', `/approvals/${id}/approve`, {});
  expect(again.status).toBe(409);
  expect(JSON.stringify(again.body)).toContain('You already decided on this call');
  const shown = await ok('approvals', 'show', id);
  expect(shown).toMatchObject({ status: 'pending' });
  expect(shown.decisions).toHaveLength(1);
  expect(callsOf(name)).toHaveLength(0);
  // Its denial is refused the same way: one person, one decision.
  const deny = await adminCall(gw.client.url, ADMIN, 'POST', `/approvals/${id}/deny`, { comment: 'no' });
  expect(deny.status).toBe(409);
  expect((await ok('approvals', 'show', id)).status).toBe('pending');
});

test('listing filters and ids are checked; the usage names the commands', async () => {
  const bad = await cli('approvals', 'list', '--status', 'maybe');
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('--status must be one of pending, approved, denied, expired, withdrawn');
  const unknown = await cli('approvals', 'show', 'apr_000000000000000000000000');
  expect(unknown.code).toBe(1);
  expect(unknown.stderr).toContain('No approval request "apr_000000000000000000000000" (not_found)');
  expect((await cli('approvals', 'show')).stderr).toContain('which approval request?');
  const { USAGE } = await import('../../src/main/admin-cli');
  for (const command of ['approvals list', 'approvals deny ID --comment C', 'approval-policy set P --file F'])
    expect(USAGE).toContain(command);
});
