/** Projects, their settings and direct members (store: projects.ts, deletion.ts, memberships.ts). */
import { z } from 'zod';
import type { NewProject, ProjectPatch, ProjectView } from '../../../store/control-plane';
import type { ProjectRecord } from '../../../store/control-plane/types';
import { AuthModeSchema, ToolProfileSchema } from '../../../store/control-plane';
import type { FlagOverride, OperationDeps } from './define';
import { ref, userRef } from './define';
import { members } from './members';
import { rest } from './rest';
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

const projects = rest({ name: 'project', plural: 'projects', path: '/projects', item: 'project' });
const projectMembers = members(projects.noun);

export const PROJECT_OPERATIONS = [
  projects.list({
    who: "admin: all; user: their teams'",
    run: async (_input, { cp, actor, deps }) =>
      (await cp.listProjects(actor)).map((v) => projectShown(v, deps)),
  }),
  projects.create({
    who: 'admin, team members',
    audit: 'project.created',
    input: z.strictObject({ slug: z.string(), team: z.string(), ...settings }),
    run: (input, { cp, actor }) => cp.createProject(actor, input as NewProject),
    cli: { flags: { features: tasksFlag } },
  }),
  projects.show({
    who: 'managers',
    run: async ({ project }, { cp, actor, deps }) => projectShown(await cp.getProject(actor, project), deps),
  }),
  projects.update({
    who: 'managers',
    audit: 'project.updated',
    input: z.strictObject({ project: ref, team: z.string().optional(), ...settings }),
    run: async ({ project, ...patch }, { cp, actor }) =>
      (await cp.updateProject(actor, project, patch as ProjectPatch)).record,
    cli: { flags: { features: tasksFlag } },
  }),
  projects.remove({
    verb: 'delete',
    who: 'managers',
    audit: 'project.deletion_started (project.deleted when done)',
    run: async ({ project }, { cp, actor, deps }): Promise<Deletion> => {
      if (!deps.startProjectDeletion) return { deleted: await cp.deleteProject(actor, project) };
      // The project stops serving at once; the deletion workflow removes the rest (docs/retention.md).
      const marked = await cp.markProjectDeleting(actor, project);
      const { workflowId } = await deps.startProjectDeletion(marked.id);
      return { deleting: { id: marked.id, slug: marked.slug, workflowId } };
    },
    http: {
      reply: (r) => {
        if (!('deleting' in r)) return undefined;
        const { id, slug, workflowId } = r.deleting;
        return { status: 202, body: { id, slug, deletion: { workflowId } } };
      },
    },
    cli: {
      note: '(a Temporal workflow: stops tasks, then deletes)',
      print: (r) => ('deleting' in r ? r : { deleted: { id: r.deleted.id, slug: r.deleted.slug } }),
    },
  }),
  projectMembers.list({
    who: 'managers',
    run: ({ project }, { cp, actor }) => cp.listProjectMembers(actor, project),
  }),
  projectMembers.add({
    who: 'managers',
    run: ({ project, user }, { cp, actor }) => cp.addProjectMember(actor, project, userRef(actor, user)),
  }),
  projectMembers.remove({
    who: 'managers',
    run: ({ project, user }, { cp, actor }) => cp.removeProjectMember(actor, project, userRef(actor, user)),
  }),
];
