/**
 * The upstream address policy (src/upstream/address-policy.ts): how addresses are classified (IPv4-mapped
 * and NAT64 forms included), what the allow-list lets through, the configuration-time check on resolved
 * names, and the connection-time check of a real UpstreamClient and of the OAuth client's requests.
 *
 * Nothing here connects to a forbidden address: names resolve through the test's own resolver, and the
 * only server is the test's own on loopback, which counts the connections it gets: a refusal must leave
 * it at zero (and the same request through an allowed path proves the count would move).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LookupAddress } from 'node:dns';
import { Agent } from 'undici';
import { parseConfig } from '../../src/config/config';
import { META, PROTOCOL_VERSION } from '../../src/protocol';
import { AddressPolicy, AddressRefusedError, classifyAddress } from '../../src/upstream/address-policy';
import { UpstreamClient } from '../../src/upstream/client';
import { UpstreamAddressRefusedError } from '../../src/upstream/errors';
import { getDocument, OAuthAddressRefusedError } from '../../src/upstream/oauth/http';

const v4 = (address: string): LookupAddress => ({ address, family: 4 });

describe('classifying addresses', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['[::ffff:7f00:1]', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['64:ff9b::a00:1', 'private'],
    ['::ffff:10.0.0.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['0.0.0.0', 'reserved'],
    ['::', 'reserved'],
    ['224.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['ff02::1', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['2002:7f00:1::', 'reserved'],
    ['::127.0.0.1', 'reserved'],
    ['not an address', 'reserved'],
    ['8.8.8.8', 'public'],
    ['172.32.0.1', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['::ffff:8.8.8.8', 'public'],
    ['64:ff9b::808:808', 'public'],
  ])('%s is %s', (address, cls) => {
    expect(classifyAddress(address)).toBe(cls);
  });
});

describe('the configuration-time check', () => {
  const names: Record<string, string[]> = {
    'public.example': ['93.184.216.34'],
    'metadata.example': ['169.254.169.254'],
    'mixed.example': ['93.184.216.34', '10.0.0.7'],
    'mcp.corp.example': ['10.1.0.5'],
    'other.corp.example': ['10.9.0.5'],
  };
  const resolve = (host: string) => Promise.resolve((names[host] ?? []).map(v4));
  const policy = (allow: string[]) => new AddressPolicy({ allow, resolve });

  it('refuses by default whatever is not public, in every spelling of the address', async () => {
    const p = policy(['public']);
    for (const url of [
      'http://127.0.0.1:8080/mcp',
      'http://[::1]/mcp',
      'http://[::ffff:127.0.0.1]/mcp',
      'http://0x7f.1/mcp',
      'http://2130706433/mcp',
      'http://0.0.0.0:8080/',
      'http://169.254.169.254/latest/meta-data/',
      'https://[fd00::1]/mcp',
      'http://192.168.0.10/mcp',
      'http://metadata.example/mcp',
      'http://mixed.example/mcp',
    ]) {
      await expect(p.checkUrl(url)).rejects.toBeInstanceOf(AddressRefusedError);
    }
    await expect(p.checkUrl('https://public.example/mcp')).resolves.toBeUndefined();
    await expect(p.checkUrl('https://93.184.216.34/mcp')).resolves.toBeUndefined();
    // A name that does not resolve now is left to the connection-time check.
    await expect(p.checkUrl('https://unknown.example/mcp')).resolves.toBeUndefined();
  });

  it('says which host and how to allow it, never what the name resolved to', async () => {
    const err = await policy(['public'])
      .checkUrl('http://metadata.example/x')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AddressRefusedError);
    expect((err as Error).message).toContain('metadata.example');
    expect((err as Error).message).toContain('upstreams.networks.allow');
    expect((err as Error).message).not.toContain('169.254');
  });

  it('lets through the networks, CIDRs and host names the allow-list names', async () => {
    const p = policy(['public', 'loopback', '10.1.0.0/16', '*.corp.example', 'metadata.example']);
    await expect(p.checkUrl('http://127.0.0.1:3001/mcp')).resolves.toBeUndefined();
    await expect(p.checkUrl('http://10.1.2.3/mcp')).resolves.toBeUndefined();
    await expect(p.checkUrl('http://mcp.corp.example/mcp')).resolves.toBeUndefined();
    await expect(p.checkUrl('http://other.corp.example/mcp')).resolves.toBeUndefined();
    await expect(p.checkUrl('http://metadata.example/mcp')).resolves.toBeUndefined();
    await expect(p.checkUrl('http://10.2.0.1/mcp')).rejects.toBeInstanceOf(AddressRefusedError);
    await expect(p.checkUrl('http://169.254.169.254/')).rejects.toBeInstanceOf(AddressRefusedError);
    // Reserved ranges are never allowed by a name, only by a CIDR.
    await expect(
      policy(['public', 'loopback', 'private']).checkUrl('http://0.0.0.0/'),
    ).rejects.toBeInstanceOf(AddressRefusedError);
  });

  it("refuses the gateway's own ports on its own addresses unless `self` is allowed", async () => {
    const p = policy(['public', 'loopback']);
    p.addOwnPort(8080);
    await expect(p.checkUrl('http://127.0.0.1:8080/v1/mcp/other')).rejects.toBeInstanceOf(
      AddressRefusedError,
    );
    await expect(p.checkUrl('http://127.0.0.1:8081/mcp')).resolves.toBeUndefined();
    // A CIDR naming the address does not open the gateway's own port either.
    const cidr = policy(['127.0.0.1']);
    cidr.addOwnPort(8080);
    await expect(cidr.checkUrl('http://127.0.0.1:8080/')).rejects.toBeInstanceOf(AddressRefusedError);
    await expect(cidr.checkUrl('http://127.0.0.1:8081/')).resolves.toBeUndefined();
    const self = policy(['public', 'self']);
    self.addOwnPort(8080);
    await expect(self.checkUrl('http://127.0.0.1:8080/v1/mcp/other')).resolves.toBeUndefined();
    await expect(self.checkUrl('http://127.0.0.1:8081/')).rejects.toBeInstanceOf(AddressRefusedError);
  });

  it('is what the configuration accepts, with ["public"] as the default', () => {
    const base = { encryption: { activeKeyId: 'k', keys: { k: 'x' } } };
    expect(parseConfig(base).upstreams.networks.allow).toEqual(['public']);
    const allow = [
      'public',
      'loopback',
      'private',
      'link-local',
      'self',
      '10.0.0.0/8',
      'fd00::/8',
      '*.corp.example',
    ];
    expect(parseConfig({ ...base, upstreams: { networks: { allow } } }).upstreams.networks.allow).toEqual(
      allow,
    );
    for (const bad of ['10.0.0.0/33', 'intranet!', '']) {
      expect(() => parseConfig({ ...base, upstreams: { networks: { allow: [bad] } } })).toThrow(/allow/);
    }
  });
});

describe('the connection-time check', () => {
  let connections = 0;
  // A 2026-07-28 server that answers server/discover (the probe, then the request itself).
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const { id } = JSON.parse(body) as { id: string };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id,
          result: {
            resultType: 'complete',
            supportedVersions: [PROTOCOL_VERSION],
            capabilities: {},
            ttlMs: 0,
            cacheScope: 'public',
          },
        }),
      );
    });
  });
  server.on('connection', () => connections++);
  let port = 0;
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  beforeEach(() => (connections = 0));

  const meta = { [META.protocolVersion]: PROTOCOL_VERSION, [META.clientCapabilities]: {} };
  const discover = (client: UpstreamClient, url: string, approved?: boolean) =>
    client.send(
      { alias: 'u', url, ...(approved !== undefined && { addressApproved: approved }) },
      'server/discover',
      { _meta: meta },
    );

  it('refuses a name that resolves elsewhere than when it was configured (DNS rebinding)', async () => {
    // Public when the manager set it, loopback when the gateway connects.
    const answers = [[v4('93.184.216.34')], [v4('127.0.0.1')]];
    const resolve = () => Promise.resolve(answers.shift() ?? [v4('127.0.0.1')]);
    const policy = new AddressPolicy({ allow: ['public'], resolve });
    await expect(policy.checkUrl(`http://rebind.example:${port}/mcp`)).resolves.toBeUndefined();
    const client = new UpstreamClient({ addressPolicy: policy });
    try {
      await expect(discover(client, `http://rebind.example:${port}/mcp`)).rejects.toBeInstanceOf(
        UpstreamAddressRefusedError,
      );
      expect(connections).toBe(0);
    } finally {
      await client.close();
    }
  });

  it('refuses an IP literal before connecting; an operator-approved address and an allowed network connect', async () => {
    const strict = new UpstreamClient({ addressPolicy: new AddressPolicy({ allow: ['public'] }) });
    const lenient = new UpstreamClient({
      addressPolicy: new AddressPolicy({
        allow: ['public', 'loopback'],
        resolve: () => Promise.resolve([v4('127.0.0.1')]),
      }),
    });
    const url = `http://127.0.0.1:${port}/mcp`;
    try {
      const refused = await discover(strict, url).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(UpstreamAddressRefusedError);
      expect((refused as Error).message).toContain('upstreams.networks.allow');
      expect(connections).toBe(0);
      // The probe says so too, and records no era.
      expect(await strict.probe({ alias: 'u', url })).toMatchObject({ era: null });
      expect(connections).toBe(0);

      expect((await discover(strict, url, true)).kind).toBe('result');
      expect(connections).toBeGreaterThan(0);
      const before = connections;
      expect((await discover(lenient, `http://allowed.example:${port}/mcp`)).kind).toBe('result');
      expect(connections).toBeGreaterThan(before);
    } finally {
      await strict.close();
      await lenient.close();
    }
  });

  it("refuses the OAuth client's requests to an address the policy refuses", async () => {
    const via = new Agent({ connect: new AddressPolicy({ allow: ['public'] }).connector() });
    try {
      await expect(
        getDocument(`http://127.0.0.1:${port}/.well-known/oauth-authorization-server`, via),
      ).rejects.toBeInstanceOf(OAuthAddressRefusedError);
      expect(connections).toBe(0);
    } finally {
      await via.close();
    }
  });
});
