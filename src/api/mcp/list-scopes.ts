/** Which list watches a listen stream needs, and when a held watch still fits its target. */
import type { ListKind, ListWatchTarget } from '../../gateway/gateway';

/** The targets' scopes with the kinds `wanted` of each, leaving out those with none. */
export function watchedScopes(
  targets: readonly ListWatchTarget[],
  wanted: ReadonlySet<ListKind>,
): { scopes: Map<string, Set<ListKind>>; watched: ListWatchTarget[] } {
  const scopes = new Map<string, Set<ListKind>>();
  const watched: ListWatchTarget[] = [];
  for (const t of targets) {
    const kinds = new Set(t.kinds.filter((k) => wanted.has(k)));
    if (kinds.size === 0) continue;
    scopes.set(t.scope, kinds);
    watched.push(t);
  }
  return { scopes, watched };
}

/** Whether two targets reach the same server the same way (address and credential headers). */
export function sameEndpoint(a: ListWatchTarget, b: ListWatchTarget): boolean {
  return (
    a.endpoint.url === b.endpoint.url &&
    JSON.stringify(a.endpoint.headers ?? {}) === JSON.stringify(b.endpoint.headers ?? {})
  );
}
