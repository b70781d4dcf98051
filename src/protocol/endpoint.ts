/**
 * Where an upstream is and how to call it: what the upstream client takes (src/upstream/endpoint.ts) and
 * the store makes, with the credential the caller is entitled to (store/control-plane/endpoints.ts). The
 * two floors sit side by side and import neither of each other, so the shape lives here, below both.
 */
import type { UpstreamProbe } from './legacy';

export interface UpstreamEndpoint {
  alias: string;
  /** The project's slug: with the alias, what metrics name the upstream by (never ids or credentials). */
  project?: string;
  url: string;
  headers?: Record<string, string>;
  /**
   * Identifies the upstream *and the credential* for caches (discovery, catalog) and for 2025-era
   * sessions: what an upstream offers may depend on whose credential asks. Defaults to the URL.
   */
  cacheKey?: string;
  /** The upstream's control-plane id: what a probe finds out is recorded under it. */
  upstreamId?: string;
  /** What the last recorded probe found out; absent when it was never probed (then probed on first use). */
  probe?: UpstreamProbe;
  /**
   * The project's own answer bounds (`limits.maxUpstreamResponseBytes`, `limits.upstreamCallDeadlineMs`):
   * they only lower the instance's, which the client applies when they are absent or higher.
   */
  answerLimits?: { maxResponseBytes?: number | undefined; callDeadlineMs?: number | undefined };
  /**
   * An operator set this address (configuration, bootstrap file, instance admin): its connections are
   * not held to the address policy. Absent or false: every connection is (src/upstream/address-policy.ts).
   */
  addressApproved?: boolean;
}
