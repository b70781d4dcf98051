/**
 * Instance-wide bounds on the gateway's traffic toward upstream servers (the `upstreams` section): how
 * much of an answer is read, how long a call may take, how connections are pooled and which networks
 * project managers may point an upstream at. One shape per concern, merged into one section, so each
 * concern's fields and defaults live (and are explained) in one place.
 */
import { z } from 'zod';

/** Reading answers: size and time bounds (docs/gateway.md). */
export const UpstreamAnswerLimitsShape = {};

/**
 * Connection pools toward upstreams (src/upstream/pools.ts): one per project upstream, so projects on
 * one address do not share (and cannot fill) one pool. docs/gateway.md, "Fair shares", has the reasons.
 */
export const UpstreamPoolShape = {
  /**
   * Connections one project upstream may hold at once, per process. 128: what every upstream address
   * had before, now for each project upstream alone; as many as a project's requests in flight
   * (`fairShare.calls.perProject`), so in an API process a project's calls never wait for a connection.
   * Idle connections close after 10 s, so the sockets a process holds follow the requests in flight.
   */
  poolConnections: z.int().positive().default(128),
  /** A pool unused this long (with nothing in flight) is closed. One minute: well past keep-alive (10 s). */
  poolIdleMs: z.int().positive().default(60_000),
  /**
   * Most pools a process keeps; past it the least recently used idle pools are closed at once. 1,000:
   * an idle pool costs little, and a process rarely calls that many distinct upstreams in a minute.
   */
  maxPools: z.int().positive().default(1_000),
};

/** Which networks upstream URLs may resolve to (the SSRF policy, docs/admin.md). */
export const UpstreamNetworkShape = {};

export const UpstreamTrafficConfigSchema = z.strictObject({
  ...UpstreamAnswerLimitsShape,
  ...UpstreamPoolShape,
  ...UpstreamNetworkShape,
});
export type UpstreamTrafficConfig = z.infer<typeof UpstreamTrafficConfigSchema>;
