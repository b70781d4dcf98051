/**
 * Which addresses the gateway may call for an upstream a project manager configured (the SSRF policy,
 * docs/admin.md, "Upstream addresses"). Upstreams an operator set (the configuration file, the bootstrap
 * file, the instance admin) are trusted; the others may reach only the networks `upstreams.networks.allow`
 * names: by default public addresses only. Loopback, link-local, private (RFC 1918, fc00::/7, CGNAT),
 * the gateway's own listening ports and every reserved range (unspecified, multicast, documentation,
 * benchmarking, 240/4…) are refused, in every spelling (IPv4-mapped and NAT64 IPv6 forms count as the
 * IPv4 address they carry).
 *
 * Checked on the resolved address, twice: when the URL is configured (`checkUrl`, so a manager hears at
 * once) and on every connection (`connector`, an undici `connect` option: the name is resolved by the
 * policy's own lookup and refused before the socket opens, so a name that resolves elsewhere later, DNS
 * rebinding, is refused too). Nothing in here ever connects to a refused address.
 */
import { lookup as dnsLookup } from 'node:dns';
import type { LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { buildConnector } from 'undici';
import { NAMED_NETWORKS, parseCidr } from '../config/upstream-traffic';

/** Where an address belongs, for the policy. `reserved` is never allowed by name (a CIDR may allow it). */
export type NetworkClass = 'public' | 'loopback' | 'private' | 'link-local' | 'reserved';

/** The code of the error a refused connection fails with (and what transport errors look for). */
export const ADDRESS_REFUSED = 'ERR_UPSTREAM_ADDRESS_REFUSED';

/** An address the policy refuses; the message names the host, never what it resolved to. */
export class AddressRefusedError extends Error {
  override readonly name = 'AddressRefusedError';
  readonly code = ADDRESS_REFUSED;
  constructor(readonly host: string) {
    super(
      `${host} is in a network project managers may not use (loopback, private, link-local and reserved ` +
        `addresses and the gateway's own ports need an instance administrator or upstreams.networks.allow)`,
    );
  }
}

const RANGES: Record<Exclude<NetworkClass, 'public'>, Array<[string, number, 'ipv4' | 'ipv6']>> = {
  loopback: [
    ['127.0.0.0', 8, 'ipv4'],
    ['::1', 128, 'ipv6'],
  ],
  private: [
    ['10.0.0.0', 8, 'ipv4'],
    ['172.16.0.0', 12, 'ipv4'],
    ['192.168.0.0', 16, 'ipv4'],
    // Carrier-grade NAT (RFC 6598): private to the provider, often the cloud's own infrastructure.
    ['100.64.0.0', 10, 'ipv4'],
    ['fc00::', 7, 'ipv6'],
  ],
  'link-local': [
    // 169.254.169.254 is where clouds answer with instance credentials.
    ['169.254.0.0', 16, 'ipv4'],
    ['fe80::', 10, 'ipv6'],
  ],
  reserved: [
    // "This network": 0.0.0.0 reaches the host itself on Linux.
    ['0.0.0.0', 8, 'ipv4'],
    ['192.0.0.0', 24, 'ipv4'],
    ['192.0.2.0', 24, 'ipv4'],
    ['198.18.0.0', 15, 'ipv4'],
    ['198.51.100.0', 24, 'ipv4'],
    ['203.0.113.0', 24, 'ipv4'],
    ['224.0.0.0', 4, 'ipv4'],
    ['240.0.0.0', 4, 'ipv4'],
    ['::', 128, 'ipv6'],
    // IPv4-compatible (deprecated), discard, Teredo, documentation, 6to4, site-local, multicast.
    ['::', 96, 'ipv6'],
    ['100::', 64, 'ipv6'],
    ['2001::', 32, 'ipv6'],
    ['2001:db8::', 32, 'ipv6'],
    ['2002::', 16, 'ipv6'],
    ['fec0::', 10, 'ipv6'],
    ['ff00::', 8, 'ipv6'],
  ],
};

const CLASS_LISTS = Object.entries(RANGES).map(([name, ranges]) => {
  const list = new BlockList();
  for (const [net, prefix, family] of ranges) list.addSubnet(net, prefix, family);
  return { name: name as NetworkClass, list };
});

/** The IPv4 address an IPv6 address stands for (IPv4-mapped, NAT64 well-known prefixes), if any. */
function embeddedIpv4(address: string): string | undefined {
  const words = ipv6Words(address);
  if (!words) return undefined;
  const zeros = (from: number, to: number) => words.slice(from, to).every((w) => w === 0);
  const mapped = zeros(0, 5) && words[5] === 0xffff;
  const nat64 = words[0] === 0x64 && words[1] === 0xff9b && (zeros(2, 6) || words[2] === 1);
  if (!mapped && !nat64) return undefined;
  const hi = words[6] ?? 0;
  const lo = words[7] ?? 0;
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join('.');
}

/** The eight 16-bit words of an IPv6 address (with `::` and a trailing dotted quad), or undefined. */
function ipv6Words(address: string): number[] | undefined {
  let text = address.toLowerCase().split('%')[0] ?? '';
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const part = (s: string) => (s === '' ? [] : s.split(':').map((w) => parseInt(w, 16)));
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  const fill = 8 - left.length - right.length;
  if (fill < 0 || (tail === undefined && fill !== 0)) return undefined;
  const words = [...left, ...new Array<number>(fill).fill(0), ...right];
  return words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff) ? words : undefined;
}

/** The class of an IP address (IPv4-mapped and NAT64 forms as the IPv4 address they carry). */
export function classifyAddress(address: string): NetworkClass {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (family === 0) return 'reserved';
  const v4 = family === 6 ? embeddedIpv4(bare) : undefined;
  const ip = v4 ?? bare;
  const type = isIP(ip) === 4 ? 'ipv4' : 'ipv6';
  for (const { name, list } of CLASS_LISTS) if (list.check(ip, type)) return name;
  return 'public';
}

/** `dns.lookup` with every address (what the policy checks); tests pass their own. */
export type Resolver = (host: string) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (host) =>
  new Promise((resolve, reject) =>
    dnsLookup(host, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))),
  );

export interface AddressPolicyOptions {
  /** `upstreams.networks.allow`: named networks, CIDRs and host names (`*.example.com` for subdomains). */
  allow: readonly string[];
  resolve?: Resolver;
}

export class AddressPolicy {
  private readonly named = new Set<string>();
  private readonly cidrs = new BlockList();
  private readonly hosts = new Set<string>();
  private readonly suffixes: string[] = [];
  private readonly ownPorts = new Set<number>();
  private readonly resolve: Resolver;

  constructor(opts: AddressPolicyOptions) {
    this.resolve = opts.resolve ?? systemResolver;
    for (const entry of opts.allow) {
      const cidr = parseCidr(entry);
      if ((NAMED_NETWORKS as readonly string[]).includes(entry)) this.named.add(entry);
      else if (cidr) this.cidrs.addSubnet(cidr.net, cidr.prefix, cidr.family);
      else if (entry.startsWith('*.')) this.suffixes.push(entry.slice(1).toLowerCase());
      else this.hosts.add(entry.toLowerCase());
    }
  }

  /** A port the gateway itself listens on (API, health): refused on the host's own addresses unless `self`. */
  addOwnPort(port: number): void {
    this.ownPorts.add(port);
  }

  /** Whether the policy lets `host` (as written in the URL) through whatever it resolves to. */
  private hostAllowed(host: string): boolean {
    const h = host.toLowerCase();
    return this.hosts.has(h) || this.suffixes.some((s) => h.endsWith(s));
  }

  /** Whether `address` (an IP) at `port` may be called. */
  allows(address: string, port: number | undefined): boolean {
    const bare = address.replace(/^\[|\]$/g, '');
    const v4 = isIP(bare) === 6 ? embeddedIpv4(bare) : undefined;
    const ip = v4 ?? bare;
    // The gateway calling itself: only `self` allows it, whatever else the list opens.
    if (port !== undefined && this.ownPorts.has(port) && isOwnAddress(ip)) return this.named.has('self');
    const cls = classifyAddress(ip);
    if (cls !== 'reserved' && this.named.has(cls)) return true;
    return this.cidrs.check(ip, isIP(ip) === 4 ? 'ipv4' : 'ipv6');
  }

  /** Configuration time: resolves the URL's host and refuses it when any address it has is refused. */
  async checkUrl(url: string): Promise<void> {
    const u = new URL(url);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    const port = portOf(u.port, u.protocol);
    if (this.hostAllowed(host)) return;
    if (isIP(host) !== 0) {
      if (!this.allows(host, port)) throw new AddressRefusedError(host);
      return;
    }
    // A name that does not resolve now is left to the connection-time check.
    const addresses = await this.resolve(host).catch(() => []);
    if (addresses.some((a) => !this.allows(a.address, port))) throw new AddressRefusedError(host);
  }

  /**
   * The `connect` option of an undici dispatcher whose connections obey the policy: an IP literal is
   * checked before connecting; a name is resolved by the policy's lookup, which fails the connection
   * when any address is refused, so the socket is never opened toward it.
   */
  connector(options: { timeout?: number } = {}): buildConnector.connector {
    const base = { timeout: options.timeout ?? 10_000 };
    const shared = buildConnector({ ...base, lookup: this.lookup(undefined) });
    const connect: buildConnector.connector = (opts, callback) => {
      const host = opts.hostname.replace(/^\[|\]$/g, '');
      const port = portOf(opts.port, opts.protocol);
      if (!this.hostAllowed(host) && isIP(host) !== 0 && !this.allows(host, port)) {
        callback(new AddressRefusedError(host), null);
        return;
      }
      // The gateway's own port: a lookup that knows the port, so an own address is refused too.
      const connector =
        port !== undefined && this.ownPorts.has(port)
          ? buildConnector({ ...base, lookup: this.lookup(port) })
          : shared;
      connector(opts, callback);
    };
    return connect;
  }

  /** A `net.connect` lookup that resolves like `dns.lookup` and refuses what the policy refuses. */
  private lookup(port: number | undefined) {
    return (
      hostname: string,
      options: { all?: boolean } | number | undefined,
      callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void,
    ): void => {
      const all = typeof options === 'object' && options.all === true;
      this.resolve(hostname).then(
        (addresses) => {
          const refused =
            !this.hostAllowed(hostname) &&
            (addresses.length === 0 || addresses.some((a) => !this.allows(a.address, port)));
          const first = addresses[0];
          if (refused || !first) callback(new AddressRefusedError(hostname), all ? [] : '');
          else if (all) callback(null, addresses);
          else callback(null, first.address, first.family);
        },
        (err: Error) => callback(err, all ? [] : ''),
      );
    };
  }
}

function portOf(port: string | number | undefined, protocol: string): number | undefined {
  if (port !== undefined && port !== '') return Number(port);
  if (protocol === 'https:') return 443;
  if (protocol === 'http:') return 80;
  return undefined;
}

/** An address of this host: loopback, unspecified, or one of its interfaces'. */
function isOwnAddress(ip: string): boolean {
  const cls = classifyAddress(ip);
  if (cls === 'loopback' || ip === '0.0.0.0' || ip === '::') return true;
  return Object.values(networkInterfaces()).some((list) => list?.some((i) => i.address === ip));
}
