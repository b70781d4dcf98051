/** A project's upstreams (store: upstreams.ts); an added or changed upstream is probed (upstream-views.ts). */
import { z } from 'zod';
import type { NewUpstream, UpstreamPatch } from '../../../store/control-plane';
import { authGroup } from './cli-groups';
import { created, defineOperation, ok, ref } from './define';
import { probed, upstreamShown, upstreamView } from './upstream-views';

/** Shapes here; the store's NewUpstreamSchema / UpstreamPatchSchema hold the rules. */
const json = z.record(z.string(), z.unknown());
const HOSTING_HELP = [
  'hosting:    --hosting {"tools","promoteAfterMs"?,"repeatable"?,"maxConcurrent"?}|off  (replaces; off: none)',
];

export const UPSTREAM_OPERATIONS = [
  defineOperation({
    name: 'upstream.list',
    who: 'managers',
    audit: 'none',
    input: z.object({ project: ref }),
    run: async ({ project }, { cp, actor, deps }) =>
      (await cp.listUpstreams(actor, project)).map((v) => upstreamShown(v, deps)),
    http: { method: 'GET', path: '/projects/:project/upstreams', reply: (upstreams) => ok({ upstreams }) },
    cli: { command: 'upstream list' },
  }),
  defineOperation({
    name: 'upstream.add',
    who: 'managers',
    audit: 'upstream.added',
    input: z.strictObject({
      project: ref,
      alias: z.string(),
      url: z.string(),
      enabled: z.boolean().optional(),
      auth: json.optional(),
      hosting: json.optional(),
    }),
    run: async ({ project, ...input }, ctx) => {
      const added = await ctx.cp.addUpstream(ctx.actor, project, input as NewUpstream);
      return probed(ctx, project, added.alias);
    },
    http: { method: 'POST', path: '/projects/:project/upstreams', reply: created },
    cli: {
      command: 'upstream add',
      flags: {
        url: { meta: 'URL' },
        // `--hosting off` says "none", which a new upstream has anyway.
        hosting: { kind: 'jsonOrOff', meta: 'JSON|off', help: HOSTING_HELP, to: (v) => v ?? undefined },
      },
      groups: [authGroup(false)],
    },
  }),
  defineOperation({
    name: 'upstream.update',
    who: 'managers',
    audit: 'upstream.updated (upstream.credentials_dropped when re-pointed)',
    input: z.strictObject({
      project: ref,
      alias: ref,
      url: z.string().optional(),
      enabled: z.boolean().optional(),
      auth: json.optional(),
      hosting: json.nullable().optional(),
    }),
    run: async ({ project, alias, ...patch }, ctx) => {
      const { record, changed } = await ctx.cp.updateUpstream(
        ctx.actor,
        project,
        alias,
        patch as UpstreamPatch,
      );
      return changed ? probed(ctx, project, record.alias) : upstreamShown(record, ctx.deps);
    },
    http: { method: 'PATCH', path: '/projects/:project/upstreams/:alias' },
    cli: {
      command: 'upstream update',
      flags: { url: { meta: 'URL' }, hosting: { kind: 'jsonOrOff', meta: 'JSON|off', help: HOSTING_HELP } },
      groups: [authGroup(true)],
    },
  }),
  defineOperation({
    name: 'upstream.probe',
    who: 'managers',
    audit: 'none',
    input: z.object({ project: ref, alias: ref }),
    run: async ({ project, alias }, ctx) =>
      probed(ctx, project, (await upstreamView(ctx, project, alias)).alias),
    http: { method: 'POST', path: '/projects/:project/upstreams/:alias/probe' },
  }),
  defineOperation({
    name: 'upstream.remove',
    who: 'managers',
    audit: 'upstream.removed',
    input: z.object({ project: ref, alias: ref }),
    run: ({ project, alias }, { cp, actor }) => cp.removeUpstream(actor, project, alias),
    http: { method: 'DELETE', path: '/projects/:project/upstreams/:alias' },
    cli: { command: 'upstream remove', print: () => ({ removed: true }) },
  }),
];
