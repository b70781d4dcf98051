/**
 * Instance-wide bounds on the gateway's traffic toward upstream servers (the `upstreams` section): how
 * much of an answer is read, how long a call may take, how connections are pooled and which networks
 * project managers may point an upstream at. One shape per concern, merged into one section, so each
 * concern's fields and defaults live (and are explained) in one place.
 */
import { isIP } from 'node:net';
import { z } from 'zod';

/** Reading answers: size and time bounds (docs/gateway.md). */
export const UpstreamAnswerLimitsShape = {};

/** Connection pools toward upstreams. */
export const UpstreamPoolShape = {};

/** `upstreams.networks.allow` entries that name a kind of network; `self`: the gateway's own ports. */
export const NAMED_NETWORKS = ['public', 'loopback', 'private', 'link-local', 'self'] as const;

/** A named network, a CIDR or single IP address, or a host name (`*.example.com` for its subdomains). */
const NetworkEntrySchema = z
  .string()
  .min(1)
  .max(255)
  .refine(
    (e) =>
      (NAMED_NETWORKS as readonly string[]).includes(e) ||
      parseCidr(e) !== undefined ||
      /^(\*\.)?[a-z0-9]([a-z0-9-]{0,62})(\.[a-z0-9]([a-z0-9-]{0,62}))*$/i.test(e),
    `a network (${NAMED_NETWORKS.join(', ')}), a CIDR such as 10.1.0.0/16, or a host name`,
  );

/** A CIDR (`10.0.0.0/8`, `fd00::/8`) or a single address (a /32 or /128); undefined for anything else. */
export function parseCidr(
  entry: string,
): { net: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const [net = '', bits, extra] = entry.split('/');
  const version = isIP(net);
  if (version === 0 || extra !== undefined) return undefined;
  const max = version === 4 ? 32 : 128;
  if (bits !== undefined && !(/^\d{1,3}$/.test(bits) && Number(bits) <= max)) return undefined;
  return { net, prefix: bits === undefined ? max : Number(bits), family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** Which networks upstream URLs may resolve to (the SSRF policy, docs/admin.md, "Upstream addresses"). */
export const UpstreamNetworkShape = {
  networks: z
    .strictObject({
      /**
       * Where upstreams a project manager configures may point: named networks (`public`, `loopback`,
       * `private`, `link-local`, `self` for the gateway's own ports), CIDRs and host names. Checked on the
       * resolved address when the URL is set and on every connection. Default `["public"]`: a manager
       * cannot make the gateway call its own host, the cloud's metadata service or the private network
       * it runs in. Upstreams an operator set (configuration file, bootstrap file, admin token) are not
       * checked; nor is anything else the operator configured (OAuth issuers, Temporal, the database).
       */
      allow: z.array(NetworkEntrySchema).default(['public']),
    })
    .prefault({}),
};

export const UpstreamTrafficConfigSchema = z.strictObject({
  ...UpstreamAnswerLimitsShape,
  ...UpstreamPoolShape,
  ...UpstreamNetworkShape,
});
export type UpstreamTrafficConfig = z.infer<typeof UpstreamTrafficConfigSchema>;
