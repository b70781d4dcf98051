/**
 * Resource updates relayed on `subscriptions/listen` (`resourceSubscriptions`): which of the URIs a
 * client asks to follow the gateway can honour, and through which upstream. The relaying itself (one
 * upstream listen per client stream and upstream) is the API's (src/api/mcp/resource-relay.ts).
 */
import type { DiscoverResult } from '../../protocol';
import type { RequestContext } from '../context';
import { discoverWithin } from './list-push';
import { firstOwnerReply } from '../lists/prompts-resources';
import type { ResolvedEndpoint } from '../name-owners';
import { enabledUpstreams } from '../name-owners';
import { isUiUri } from '../lists/ui-resources';

/** URIs one listen may follow; the rest are left out of the acknowledgement (each costs a read). */
export const MAX_RESOURCE_SUBSCRIPTIONS = 32;

/** One upstream, reached with the caller's credential, and the URIs followed there. */
export interface ResourceWatchTarget {
  upstreamId: string;
  endpoint: ResolvedEndpoint;
  uris: string[];
}

/**
 * Whether the upstream announces resource updates (`resources.subscribe` in its `server/discover`). A
 * 2025-era upstream's synthesized discover never says so (src/upstream/eras/2025-11-25/translate.ts): only
 * 2026-07-28 upstreams, whose own `subscriptions/listen` takes `resourceSubscriptions`, count.
 */
export function announcesUpdates(d: DiscoverResult): boolean {
  const resources = d.capabilities.resources as { subscribe?: unknown } | undefined;
  return resources?.subscribe === true;
}

/**
 * The URIs among `uris` that can be followed, grouped by the upstream that serves them: each URI's owner
 * is the upstream `resources/read` would read it from (the first that does not answer "not found", with
 * the caller's credential), and it is followed only when that upstream announces updates. Unknown URIs,
 * URIs the caller cannot read, and owners that fail are left out without saying why: the answer is
 * never more than `resources/read` tells the same caller.
 */
export async function resourceWatchTargets(
  ctx: RequestContext,
  uris: readonly string[],
): Promise<ResourceWatchTarget[]> {
  const wanted = [...new Set(uris)].slice(0, MAX_RESOURCE_SUBSCRIPTIONS);
  if (wanted.length === 0 || !(await someUpstreamAnnounces(ctx))) return [];
  // Ownership is found with reads that must not write on the listen's own stream.
  const quiet: RequestContext = { ...ctx, call: { ...ctx.call, notify: undefined } };
  const byUpstream = new Map<string, ResourceWatchTarget>();
  const announces = new Map<string, boolean>();
  for (const uri of wanted) {
    // A view's namespaced URI is not the one its upstream follows: views are read, not followed.
    if (ctx.call.project.namespacing && isUiUri(uri)) continue;
    try {
      const { upstream, endpoint } = await firstOwnerReply(quiet, 'resources/read', { uri });
      let ok = announces.get(upstream.id);
      if (ok === undefined) {
        ok = announcesUpdates(await discoverWithin(ctx, endpoint));
        announces.set(upstream.id, ok);
      }
      if (!ok) continue;
      const target = byUpstream.get(upstream.id) ?? { upstreamId: upstream.id, endpoint, uris: [] };
      target.uris.push(uri);
      byUpstream.set(upstream.id, target);
    } catch {
      // Not found, not the caller's to read, or its owner failed: not honoured.
    }
  }
  return [...byUpstream.values()];
}

/** Whether any enabled upstream the caller can reach announces updates (else no URI is read at all). */
async function someUpstreamAnnounces(ctx: RequestContext): Promise<boolean> {
  const settled = await Promise.allSettled(
    enabledUpstreams(ctx.call.project).map(async (u) =>
      announcesUpdates(await discoverWithin(ctx, await ctx.resolve(u))),
    ),
  );
  return settled.some((s) => s.status === 'fulfilled' && s.value);
}
