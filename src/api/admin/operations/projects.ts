/** Projects, their settings and direct members (store: projects.ts, deletion.ts, memberships.ts). */
import { z } from 'zod';
import type { NewProject, ProjectPatch, ProjectView } from '../../../store/control-plane';
import type { ProjectRecord } from '../../../store/control-plane/types';
import { AuthModeSchema, ToolProfileSchema } from '../../../store/control-plane';
import type { FlagOverride, OperationDeps } from './define';
import { defineOperation, membership, ok, ref, userRef } from './define';
import { memberUser } from './teams';
import { upstreamShown } from './upstream-views';

/** A project's settings: their types here, their rules (and defaults) in the store's schemas. */
const json = z.record(z.string(), z.unknown());
const settings = {
  authMode: AuthModeSchema.optional(),
  toolProfile: ToolProfileSchema.optional(),
  features: json.optional(),
  namespacing: z.boolean().optional(),
  cache: json.optional(),
  limits: json.optional(),
};

/** `--tasks on|off` is the CLI's `features.tasks`. */
const tasksFlag: FlagOverride = { flag: 'tasks', kind: 'onOff', to: (tasks) => ({ tasks }) };

/** Deleted at once (no task engine here), or marked and handed to the deletion workflow. */
type Deletion = { deleted: ProjectRecord } | { deleting: { id: string; slug: string; workflowId: string } };

function projectShown(view: ProjectView, deps: OperationDeps): ProjectView {
  return { ...view, upstreams: view.upstreams.map((u) => upstreamShown(u, deps)) };
}

export const PROJECT_OPERATIONS = [
  defineOperation({
    name: 'project.list',
    who: "admin: all; user: their teams'",
    audit: 'none',
    input: z.object({}),
    run: async (_input, { cp, actor, deps }) =>
      (await cp.listProjects(actor)).map((v) => projectShown(v, deps)),
    http: { method: 'GET', path: '/projects', reply: (projects) => ok({ projects }) },
    cli: { command: 'project list' },
  }),
  defineOperation({
    name: 'project.create',
    who: 'admin, team members',
    audit: 'project.created',
    input: z.strictObject({ slug: z.string(), team: z.string(), ...settings }),
    run: (input, { cp, actor }) => cp.createProject(actor, input as NewProject),
    http: { method: 'POST', path: '/projects', status: 201 },
    cli: { command: 'project create', flags: { features: tasksFlag } },
  }),
  defineOperation({
    name: 'project.show',
    who: 'managers',
    audit: 'none',
    input: z.object({ project: ref }),
    run: async ({ project }, { cp, actor, deps }) => projectShown(await cp.getProject(actor, project), deps),
    http: { method: 'GET', path: '/projects/:project' },
    cli: { command: 'project show' },
  }),
  defineOperation({
    name: 'project.update',
    who: 'managers',
    audit: 'project.updated',
    input: z.strictObject({ project: ref, team: z.string().optional(), ...settings }),
    run: async ({ project, ...patch }, { cp, actor }) =>
      (await cp.updateProject(actor, project, patch as ProjectPatch)).record,
    http: { method: 'PATCH', path: '/projects/:project' },
    cli: { command: 'project update', flags: { features: tasksFlag } },
  }),
  defineOperation({
    name: 'project.delete',
    who: 'managers',
    audit: 'project.deletion_started (project.deleted when done)',
    input: z.object({ project: ref }),
    run: async ({ project }, { cp, actor, deps }): Promise<Deletion> => {
      if (!deps.startProjectDeletion) return { deleted: await cp.deleteProject(actor, project) };
      // The project stops serving at once; the deletion workflow removes the rest (docs/retention.md).
      const marked = await cp.markProjectDeleting(actor, project);
      const { workflowId } = await deps.startProjectDeletion(marked.id);
      return { deleting: { id: marked.id, slug: marked.slug, workflowId } };
    },
    http: {
      method: 'DELETE',
      path: '/projects/:project',
      reply: (r) => {
        if (!('deleting' in r)) return undefined;
        const { id, slug, workflowId } = r.deleting;
        return { status: 202, body: { id, slug, deletion: { workflowId } } };
      },
    },
    cli: {
      command: 'project delete',
      note: '(a Temporal workflow: stops tasks, then deletes)',
      print: (r) => ('deleting' in r ? r : { deleted: { id: r.deleted.id, slug: r.deleted.slug } }),
    },
  }),
  defineOperation({
    name: 'project.members',
    who: 'managers',
    audit: 'none',
    input: z.object({ project: ref }),
    run: ({ project }, { cp, actor }) => cp.listProjectMembers(actor, project),
    http: { method: 'GET', path: '/projects/:project/members', reply: (members) => ok({ members }) },
  }),
  defineOperation({
    name: 'project.addMember',
    who: 'managers',
    audit: 'project.member_added',
    input: z.object({ project: ref, user: memberUser }),
    run: ({ project, user }, { cp, actor }) => cp.addProjectMember(actor, project, userRef(actor, user)),
    http: { method: 'POST', path: '/projects/:project/members', reply: membership },
    cli: { command: 'project add-member', print: (r) => r.record },
  }),
  defineOperation({
    name: 'project.removeMember',
    who: 'managers',
    audit: 'project.member_removed',
    input: z.object({ project: ref, user: ref }),
    run: ({ project, user }, { cp, actor }) => cp.removeProjectMember(actor, project, userRef(actor, user)),
    http: { method: 'DELETE', path: '/projects/:project/members/:user' },
    cli: { command: 'project remove-member', print: () => ({ removed: true }) },
  }),
];
