/** A project's upstreams (store: upstreams.ts); an added or changed upstream is probed (upstream-views.ts). */
import { z } from 'zod';
import type { NewUpstream, UpstreamPatch } from '../../../store/control-plane';
import { authGroup } from './cli-groups';
import { ref } from './define';
import { rest } from './rest';
import { probed, upstreamShown, upstreamView } from './upstream-views';

/** Shapes here; the store's NewUpstreamSchema / UpstreamPatchSchema hold the rules. */
const json = z.record(z.string(), z.unknown());
const HOSTING_HELP = [
  'hosting:    --hosting {"tools","promoteAfterMs"?,"repeatable"?,"maxConcurrent"?}|off  (replaces; off: none)',
];

const upstreams = rest({
  name: 'upstream',
  plural: 'upstreams',
  path: '/projects/:project/upstreams',
  item: 'alias',
});

export const UPSTREAM_OPERATIONS = [
  upstreams.list({
    who: 'managers',
    run: async ({ project }, { cp, actor, deps }) =>
      (await cp.listUpstreams(actor, project)).map((v) => upstreamShown(v, deps)),
  }),
  upstreams.create({
    verb: 'add',
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
    cli: {
      flags: {
        url: { meta: 'URL' },
        // `--hosting off` says "none", which a new upstream has anyway.
        hosting: { kind: 'jsonOrOff', meta: 'JSON|off', help: HOSTING_HELP, to: (v) => v ?? undefined },
      },
      groups: [authGroup(false)],
    },
  }),
  upstreams.update({
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
    cli: {
      flags: { url: { meta: 'URL' }, hosting: { kind: 'jsonOrOff', meta: 'JSON|off', help: HOSTING_HELP } },
      groups: [authGroup(true)],
    },
  }),
  upstreams.action({
    verb: 'probe',
    who: 'managers',
    audit: 'none',
    run: async ({ project, alias }, ctx) =>
      probed(ctx, project, (await upstreamView(ctx, project, alias)).alias),
    cli: false,
  }),
  upstreams.remove({
    who: 'managers',
    audit: 'upstream.removed',
    run: ({ project, alias }, { cp, actor }) => cp.removeUpstream(actor, project, alias),
    cli: { print: () => ({ removed: true }) },
  }),
];
