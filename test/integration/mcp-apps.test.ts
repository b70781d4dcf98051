/**
 * MCP Apps (`io.modelcontextprotocol/ui`) through the gateway: two upstreams written with the 2026 SDK
 * (`@modelcontextprotocol/server` 2.4.0) each serve a view under the same `ui://` URI; the SDK 2.x client
 * (`@modelcontextprotocol/client` 2.4.0), declaring the extension as a host that shows views does, lists
 * the tools, follows each tool's `_meta.ui.resourceUri` and reads the view of the right upstream. Reads
 * are never answered from a cache, and are marked `private`. With namespacing off every URI stays the
 * upstream's own, and two upstreams with one view URI are refused at configuration time.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { UI_EXTENSION, UI_MIME_TYPE } from '../../src/protocol';
import { UpstreamCatalog } from '../../src/gateway/catalog';
import type { ResolvedEndpoint } from '../../src/gateway/name-owners';
import { checkNamespacing, ConfigurationError } from '../../src/gateway/name-owners';
import type { ProjectRecord, UpstreamRecord } from '../../src/store/control-plane/types';
import { UpstreamClient } from '../../src/upstream/client';
import type { AppsUpstream } from '../fixtures/sdk2-apps-upstream';
import { startAppsUpstream, VIEW_URI } from '../fixtures/sdk2-apps-upstream';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';

const HOST_CAPS = { extensions: { [UI_EXTENSION]: { mimeTypes: [UI_MIME_TYPE] } } };

let alpha: AppsUpstream;
let beta: AppsUpstream;
let gw: TestGateway;

beforeAll(async () => {
  alpha = await startAppsUpstream('alpha');
  beta = await startAppsUpstream('beta');
  gw = await startTestGateway({
    projects: () => [
      {
        slug: 'apps',
        namespacing: true,
        upstreams: [
          { alias: 'alpha', url: alpha.url },
          { alias: 'beta', url: beta.url },
        ],
      },
      { slug: 'apps-flat', namespacing: false, upstreams: [{ alias: 'alpha', url: alpha.url }] },
    ],
  });
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await alpha?.close();
  await beta?.close();
});

async function hostClient(slug: string): Promise<Client> {
  const client = new Client({ name: 'apps-host', version: '1.0.0' }, { capabilities: HOST_CAPS });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.clientFor(slug).url)));
  return client;
}

function uiMetaOf(tool: { _meta?: Record<string, unknown> }) {
  return tool._meta as { ui?: { resourceUri?: string; visibility?: string[] }; 'ui/resourceUri'?: string };
}

test('a host follows each tool to its own upstream view through the namespaced ui:// URI', async () => {
  const client = await hostClient('apps');
  try {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const alias of ['alpha', 'beta']) {
      const show = byName.get(`${alias}.show`);
      expect(uiMetaOf(show ?? {}).ui).toEqual({
        resourceUri: `ui://${alias}/widget/view.html`,
        visibility: ['model', 'app'],
      });
      expect(uiMetaOf(byName.get(`${alias}.show_flat`) ?? {})['ui/resourceUri']).toBe(
        `ui://${alias}/widget/view.html`,
      );

      const uri = uiMetaOf(show ?? {}).ui?.resourceUri as string;
      const before = (alias === 'alpha' ? alpha : beta).stats.viewReads;
      const read = await client.readResource({ uri });
      const [content] = read.contents as Array<Record<string, unknown>>;
      expect(content).toMatchObject({
        uri,
        mimeType: UI_MIME_TYPE,
        text: expect.stringContaining(`view of ${alias}`),
        _meta: { ui: { csp: { connectDomains: [`https://${alias}.example`] } } },
      });
      expect((alias === 'alpha' ? alpha : beta).stats.viewReads).toBe(before + 1);

      // The tool itself still runs on its upstream.
      const shown = await client.callTool({ name: `${alias}.show`, arguments: {} });
      expect(shown.structuredContent).toEqual({ label: alias });
    }

    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual([
      'ui://alpha/widget/view.html',
      'ui://beta/widget/view.html',
    ]);
    expect(resources[0]?._meta).toEqual({ ui: { prefersBorder: true } });
  } finally {
    await client.close();
  }
  // The host's declaration reached the upstreams, so a server that lists view tools only to hosts that
  // show views lists them.
  expect(alpha.stats.listCapabilities).toContainEqual(HOST_CAPS);
});

test('views are read anew for every request and marked private; unknown and bare ui:// URIs are not found', async () => {
  const apps = gw.clientFor('apps');
  const uri = 'ui://beta/widget/view.html';
  const before = beta.stats.viewReads;
  for (let i = 0; i < 3; i++) {
    const reply = await apps.request('resources/read', { uri }, { capabilities: HOST_CAPS });
    expect(reply.body.result).toMatchObject({ cacheScope: 'private', contents: [{ uri }] });
  }
  expect(beta.stats.viewReads).toBe(before + 3);

  for (const missing of ['ui://gamma/widget/view.html', VIEW_URI, 'ui://alpha/', 'ui://']) {
    const reply = await apps.request('resources/read', { uri: missing }, { capabilities: HOST_CAPS });
    expect(reply.body.error).toMatchObject({ code: -32602, message: 'Resource not found' });
  }
});

test('server/discover advertises the extension that its upstreams advertise, not their instructions', async () => {
  const reply = await gw.clientFor('apps').request('server/discover', {}, { capabilities: HOST_CAPS });
  expect(reply.body.result?.capabilities).toMatchObject({
    resources: {},
    extensions: { [UI_EXTENSION]: { mimeTypes: [UI_MIME_TYPE] } },
  });
  // Each upstream has `instructions` for the model; none speaks for the project (protocol-decisions.md).
  expect(reply.body.result).not.toHaveProperty('instructions');
  // The example upstream of the demo project advertises no views: nothing is claimed for it.
  const demo = await gw.client.request('server/discover', {}, { capabilities: HOST_CAPS });
  expect(JSON.stringify(demo.body.result?.capabilities)).not.toContain(UI_EXTENSION);
});

test('with namespacing off, tools and views keep the upstream URI', async () => {
  const client = await hostClient('apps-flat');
  try {
    const { tools } = await client.listTools();
    const show = tools.find((t) => t.name === 'show');
    expect(uiMetaOf(show ?? {}).ui?.resourceUri).toBe(VIEW_URI);
    const read = await client.readResource({ uri: VIEW_URI });
    expect(read.contents[0]).toMatchObject({ uri: VIEW_URI, text: expect.stringContaining('view of alpha') });
  } finally {
    await client.close();
  }
});

test('namespacing off with two upstreams serving one view URI is refused at configuration time', async () => {
  const upstream = (alias: string, url: string) =>
    ({ id: `u-${alias}`, alias, url, enabled: true }) as unknown as UpstreamRecord;
  const project = {
    slug: 'clash',
    namespacing: false,
    upstreams: [upstream('alpha', alpha.url), upstream('beta', beta.url)],
  } as unknown as ProjectRecord;
  const client = new UpstreamClient();
  const catalog = new UpstreamCatalog(client, { name: 'test', version: '0' });
  const resolve = async (u: UpstreamRecord): Promise<ResolvedEndpoint> => ({
    alias: u.alias,
    url: u.url,
    cacheKey: u.id,
    resolved: true,
    authorizationId: null,
  });
  try {
    const refused = checkNamespacing(project, catalog, resolve);
    await expect(refused).rejects.toBeInstanceOf(ConfigurationError);
    await expect(refused).rejects.toThrow(`UI resource "${VIEW_URI}" (alpha, beta)`);
  } finally {
    await client.close();
  }
});
