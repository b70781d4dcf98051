/**
 * Who an upstream is, for what this process remembers about it (the era it speaks, its 2025-era
 * sessions, its discover answer): the project upstream (its control-plane id) at its address. The address
 * is part of the key, so a re-pointed upstream never reuses what another address answered or the
 * session opened there; the id is, so two projects' upstreams at one address never share a session or
 * an era found out under another project's settings. The address is the transport's: the URL for HTTP.
 */
import type { UpstreamEndpoint } from './endpoint';

/** The upstream's address as its transport names it (HTTP: the URL). */
export function addressOf(endpoint: UpstreamEndpoint): string {
  return endpoint.url;
}

/** The key of an upstream: its id and address, or the address alone for an endpoint without an id. */
export function upstreamKey(endpoint: UpstreamEndpoint): string {
  const address = addressOf(endpoint);
  return endpoint.upstreamId !== undefined ? `id:${endpoint.upstreamId}@${address}` : `address:${address}`;
}
