/**
 * List changes relayed on `subscriptions/listen`: which upstreams of a project announce changes of
 * which lists (what a listen may be promised), and dropping what this process cached of an upstream's
 * lists before a client is told to re-list. The watching itself (one upstream listen per upstream and
 * credential) and the cross-replica feed are the API's (src/api/mcp/list-feed.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { DiscoverResult } from '../../protocol';
import type { ListKind } from '../../store/sessions/upstream-events';
import { LIST_KINDS } from '../../store/sessions/upstream-events';
import type { RequestContext } from '../context';
import type { ResolvedEndpoint } from '../name-owners';
import { enabledUpstreams } from '../name-owners';

export type { ListKind } from '../../store/sessions/upstream-events';

/**
 * How long a listen waits for an upstream's `server/discover` (usually cached) before leaving it out:
 * the acknowledgement must not wait on an upstream that hangs.
 */
const DISCOVER_WAIT_MS = 5_000;

/** The upstream's `server/discover` (usually cached), or a rejection after DISCOVER_WAIT_MS. */
export function discoverWithin(ctx: RequestContext, endpoint: ResolvedEndpoint): Promise<DiscoverResult> {
  return Promise.race([
    ctx.deps.discovery.get(endpoint),
    sleep(DISCOVER_WAIT_MS, undefined, { ref: false }).then(() => {
      throw new Error('server/discover took too long');
    }),
  ]);
}

/** One upstream, reached with the caller's credential, and the lists it announces changes of. */
export interface ListWatchTarget {
  projectId: string;
  upstreamId: string;
  /** The upstream and credential (the caches' key): one watch per scope, and who may be told. */
  scope: string;
  endpoint: ResolvedEndpoint;
  kinds: ListKind[];
}

/**
 * The lists an upstream announces changes of: `listChanged: true` in its `server/discover`. A 2025-era
 * upstream's synthesized discover says so only when it keeps sessions (a stateful HTTP server, a stdio
 * process: src/upstream/eras/2025-11-25/translate.ts), whose session stream the list watch follows
 * (list-watch.ts there); a 2026-07-28 upstream's own `subscriptions/listen` is followed.
 */
export function announcedKinds(d: DiscoverResult): ListKind[] {
  const caps = d.capabilities as Record<string, { listChanged?: unknown } | undefined>;
  return LIST_KINDS.filter((k) => caps[k]?.listChanged === true);
}

/**
 * The enabled upstreams of the caller's project that announce list changes, with the caller's
 * credential. Upstreams the caller has no credential for, or that cannot be reached now (or not within
 * DISCOVER_WAIT_MS), are left out, and so is what they would have announced: the acknowledgement
 * promises only what is watched.
 */
export async function listWatchTargets(ctx: RequestContext): Promise<ListWatchTarget[]> {
  const project = ctx.call.project;
  const settled = await Promise.allSettled(
    enabledUpstreams(project).map(async (u): Promise<ListWatchTarget | undefined> => {
      const endpoint = await ctx.resolve(u);
      const discovered = await discoverWithin(ctx, endpoint);
      const kinds = announcedKinds(discovered);
      if (kinds.length === 0) return undefined;
      const scope = endpoint.cacheKey ?? endpoint.url;
      return { projectId: project.id, upstreamId: u.id, scope, endpoint, kinds };
    }),
  );
  return settled.flatMap((s) => (s.status === 'fulfilled' && s.value ? [s.value] : []));
}
