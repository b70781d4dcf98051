/**
 * Instance-wide bounds on the gateway's traffic toward upstream servers (the `upstreams` section): how
 * much of an answer is read, how long a call may take, how connections are pooled and which networks
 * project managers may point an upstream at. One shape per concern, merged into one section, so each
 * concern's fields and defaults live (and are explained) in one place.
 */
import { z } from 'zod';

/** Reading answers: size and time bounds (docs/gateway.md). */
export const UpstreamAnswerLimitsShape = {};

/** Connection pools toward upstreams. */
export const UpstreamPoolShape = {};

/** Which networks upstream URLs may resolve to (the SSRF policy, docs/admin.md). */
export const UpstreamNetworkShape = {};

export const UpstreamTrafficConfigSchema = z.strictObject({
  ...UpstreamAnswerLimitsShape,
  ...UpstreamPoolShape,
  ...UpstreamNetworkShape,
});
export type UpstreamTrafficConfig = z.infer<typeof UpstreamTrafficConfigSchema>;
