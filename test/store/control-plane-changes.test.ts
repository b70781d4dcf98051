/**
 * The control plane on the database under test, what changes leave behind: deleting a project (rows,
 * keys and authorizations gone, the audit trail kept), the gateway's own audit events, and the list-change
 * rows written with the control-plane changes that alter what a project lists.
 */
import { ControlPlaneError } from '../../src/store/control-plane';
import {
  CONTROL_PLANE_SCOPE,
  LIST_KINDS,
  UpstreamEvents,
  userControlPlaneScope,
} from '../../src/store/sessions/upstream-events';
import {
  admin,
  alice,
  alpha,
  bob,
  carol,
  cp,
  db,
  deleted,
  expectCode,
  useControlPlane,
} from './control-plane-fixture';

useControlPlane();

describe('audit and deletion', () => {
  it('the gateway can record its own events (e.g. denied task access)', async () => {
    await cp.audit({
      projectId: alpha.id,
      actor: 'user:x',
      action: 'task.access_denied',
      detail: { reason: 'other caller' },
    });
    const [latest] = await cp.listAudit(alice, { project: 'alpha', limit: 1 });
    expect(latest).toMatchObject({ action: 'task.access_denied', detail: { reason: 'other caller' } });
  });

  it('deleting a project removes its rows, keys and authorizations; the audit trail stays', async () => {
    await cp.createProject(alice, { slug: 'doomed', team: 'core' });
    const { key } = await cp.createApiKey(alice, 'doomed', { name: 'k' });
    await cp.addUpstream(alice, 'doomed', {
      alias: 'gh',
      url: 'http://127.0.0.1:9/gh',
      auth: { mode: 'per_user' },
    });
    const auth = await cp.grantUpstreamAuthorization(alice, 'doomed', 'gh', { credential: 'tok' });
    await cp.addProjectMember(alice, 'doomed', 'bob');
    const project = (await cp.projectBySlug('doomed'))!;

    await expectCode(cp.deleteProject(carol, 'doomed'), 'forbidden');
    await cp.deleteProject(alice, 'doomed');
    expect(deleted.map((p) => p.slug)).toContain('doomed');
    expect(await cp.projectBySlug('doomed')).toBeUndefined();
    expect(await cp.authenticate(key)).toBeUndefined();
    expect(await cp.authorizationValid(auth.id)).toBe(false);
    for (const t of ['upstreams', 'api_keys', 'project_members'] as const) {
      const rows = await db.selectFrom(t).select('project_id').where('project_id', '=', project.id).execute();
      expect(rows).toHaveLength(0);
    }
    const trail = await cp.listAudit(admin, { project: project.id });
    expect(trail[0]).toMatchObject({ action: 'project.deleted', detail: { slug: 'doomed' } });
  });

  it('errors are ControlPlaneErrors', () => {
    expect(new ControlPlaneError('conflict', 'x')).toBeInstanceOf(Error);
  });
});

describe('control-plane changes as list changes', () => {
  const events = () => new UpstreamEvents(db);
  /** The rows written since `after`, as `scope kind`. */
  async function rowsAfter(after: number): Promise<string[]> {
    return (await events().after(after)).map((e) => `${e.scope} ${e.kind}`);
  }
  const every = (scope: string) => LIST_KINDS.map((k) => `${scope} ${k}`);

  it('writes rows exactly with the changes that alter what the project lists, and none for a refused one', async () => {
    await cp.createProject(admin, { slug: 'gamma', team: 'core' });
    await cp.addProjectMember(alice, 'gamma', 'bob');
    let from = await events().latestId();
    await cp.addUpstream(alice, 'gamma', { alias: 'one', url: 'http://127.0.0.1:9/one' });
    expect(await rowsAfter(from)).toEqual(every(CONTROL_PLANE_SCOPE));

    // Refused (the alias exists): the transaction wrote nothing, rows included. Added disabled: nothing.
    from = await events().latestId();
    await expectCode(
      cp.addUpstream(alice, 'gamma', { alias: 'one', url: 'http://127.0.0.1:9/x' }),
      'conflict',
    );
    await cp.addUpstream(alice, 'gamma', { alias: 'off', url: 'http://127.0.0.1:9/off', enabled: false });
    await cp.removeUpstream(alice, 'gamma', 'off');
    expect(await rowsAfter(from)).toEqual([]);

    // Settings that do not touch the lists: nothing; namespacing: tools and prompts; tool profile: tools.
    await cp.updateProject(alice, 'gamma', { limits: { maxResultBytes: 5_000 } });
    await cp.updateProject(alice, 'gamma', { namespacing: false });
    await cp.updateProject(alice, 'gamma', { toolProfile: 'standard' });
    expect(await rowsAfter(from)).toEqual([
      `${CONTROL_PLANE_SCOPE} tools`,
      `${CONTROL_PLANE_SCOPE} prompts`,
      `${CONTROL_PLANE_SCOPE} tools`,
    ]);

    // A user's own authorization: only that user's scope; refreshing it in place changes nothing seen.
    await cp.addUpstream(alice, 'gamma', {
      alias: 'mine',
      url: 'http://127.0.0.1:9/mine',
      auth: { mode: 'per_user' },
    });
    from = await events().latestId();
    const bobScope = userControlPlaneScope((bob as { userId: string }).userId);
    await cp.grantUpstreamAuthorization(bob, 'gamma', 'mine', { credential: 'first' });
    await cp.grantUpstreamAuthorization(bob, 'gamma', 'mine', { credential: 'refreshed' });
    await cp.revokeUpstreamAuthorization(bob, 'gamma', 'mine');
    expect(await rowsAfter(from)).toEqual([...every(bobScope), ...every(bobScope)]);

    from = await events().latestId();
    await cp.updateUpstream(alice, 'gamma', 'one', { enabled: false });
    await cp.updateUpstream(alice, 'gamma', 'one', { url: 'http://127.0.0.1:9/moved' });
    await cp.updateUpstream(alice, 'gamma', 'one', { enabled: true });
    await cp.removeUpstream(alice, 'gamma', 'one');
    // Disabled, then moved while disabled (nobody saw it), enabled, removed.
    expect(await rowsAfter(from)).toEqual([
      ...every(CONTROL_PLANE_SCOPE),
      ...every(CONTROL_PLANE_SCOPE),
      ...every(CONTROL_PLANE_SCOPE),
    ]);
  });
});
