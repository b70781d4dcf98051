/**
 * Instance-wide bounds on the gateway's traffic toward upstream servers (the `upstreams` section): how
 * much of an answer is read, how long a call may take, how connections are pooled and which networks
 * project managers may point an upstream at. One shape per concern, merged into one section, so each
 * concern's fields and defaults live (and are explained) in one place.
 */
import { isIP } from 'node:net';
import { z } from 'zod';

const MiB = 1024 * 1024;

/**
 * Reading answers: size and time bounds (docs/gateway.md, "Upstream answers"). The figures behind each
 * default are in docs/performance.md ("Large upstream answers").
 */
export const UpstreamAnswerLimitsShape = {
  /**
   * Largest upstream answer read, in bytes: a JSON body, or one SSE event of a request's answer (any
   * event may carry the response). Reading stops the moment it is passed and the call fails with -31014.
   * It is both the default and the ceiling of a project's `limits.maxUpstreamResponseBytes`. 16 MiB: 16
   * times the default result a client receives (`limits.maxResultBytes`), so results a project truncates
   * or compacts still arrive whole, while one such answer in flight grew the process by 30–90 MiB.
   */
  maxResponseBytes: z
    .int()
    .positive()
    .max(1024 * MiB)
    .default(16 * MiB),
  /**
   * Largest SSE event on a stream that carries notifications only (`subscriptions/listen`, a 2025-era
   * upstream's GET stream), in bytes (its data, or any one line). 1 MiB: notifications are small (the
   * largest the gateway relays are resource and list updates), and a line that never ends stops here.
   */
  maxSseEventBytes: z.int().positive().default(MiB),
  /**
   * Most distinct key names one answer may use (at any depth, `_meta` included); more fails the call with
   * -31014. What a parsed answer costs the event loop grows with them, not with its bytes alone: a
   * 50,000-key `_meta` took 1.7 s of CPU. Checked where large answers are parsed (off the event loop);
   * an answer under `offThreadBytes` cannot hold that many. 5,000: a tool list of hundreds of tools uses
   * a few hundred, while the worst shape of that many names costs the event loop about 14 ms to take in.
   */
  maxAnswerKeys: z.int().positive().default(5_000),
  /**
   * Longest an ordinary call's answer may take from the request to its last byte; past it the call is
   * cut and fails with -31015. Not for `subscriptions/listen` streams or task watches (they have their
   * own lifetimes). On an SSE answer each relayed `notifications/progress` starts the time again: a long
   * tool that keeps reporting progress is working. The idle bound (no byte for `timeoutMs`) still holds.
   * Two minutes: the time the first call of a task gets too (work that takes longer belongs on the task
   * path), and the ceiling of a project's `limits.upstreamCallDeadlineMs`.
   */
  callDeadlineMs: z.int().positive().default(120_000),
  /**
   * Answers larger than this (bytes) are parsed, checked and, for `tools/call` results, cut to the
   * project's response limit on a worker thread, so the event loop never parses a large answer. 16 KiB:
   * parsing that much costs the event loop under 3 ms even in the worst shape measured.
   */
  offThreadBytes: z
    .int()
    .min(0)
    .default(16 * 1024),
  /** Worker threads that parse large answers (0: parse on the event loop, for debugging only). */
  answerThreads: z.int().min(0).max(16).default(2),
};

const UpstreamAnswerLimitsSchema = z.strictObject(UpstreamAnswerLimitsShape);
/** The answer limits with their defaults (for an upstream client built without a configuration). */
export type UpstreamAnswerLimits = z.infer<typeof UpstreamAnswerLimitsSchema>;
export const DEFAULT_ANSWER_LIMITS: UpstreamAnswerLimits = UpstreamAnswerLimitsSchema.parse({});

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
