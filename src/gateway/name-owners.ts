/**
 * Which upstream owns a name, and the name the upstream knows it by. With namespacing on the alias is
 * part of the name; with it off the catalog decides, and a name offered by two upstreams belongs to
 * neither (the configuration check refuses such projects; this covers upstreams that change later).
 * Upstreams are reached with the caller's own credential (`Resolve`); one the caller has no credential
 * for is invisible to name lookups.
 */
import type { Tool } from '../protocol';
import { ProtocolError } from '../protocol';
import type { ResolvedEndpoint as CredentialedEndpoint } from '../store/control-plane/endpoints';
import type { ProjectRecord, UpstreamRecord } from '../store/control-plane/types';
import type { UpstreamEndpoint } from '../upstream/client';
import type { Prompt, UpstreamCatalog } from './catalog';
import { splitNamespaced } from './naming';
import { uiResourceUriOf } from './lists/ui-resources';

/**
 * An upstream endpoint carrying the caller's own credential (store/control-plane/endpoints.ts makes
 * them), checked here to be what the upstream client calls.
 */
export type ResolvedEndpoint = UpstreamEndpoint & CredentialedEndpoint;

/** The endpoint of an upstream with the caller's credential; throws when the caller has none. */
export type Resolve = (upstream: UpstreamRecord) => Promise<ResolvedEndpoint>;

export function enabledUpstreams(project: ProjectRecord): UpstreamRecord[] {
  return project.upstreams.filter((u) => u.enabled);
}

export interface RoutedTool {
  endpoint: ResolvedEndpoint;
  name: string;
  /** The upstream's tool definition, when its catalog lists it. */
  tool?: Tool;
}

export interface RoutedPrompt {
  endpoint: ResolvedEndpoint;
  name: string;
}

type Kind = 'tool' | 'prompt';

export class NameOwners {
  constructor(private readonly catalog: UpstreamCatalog) {}

  async tool(project: ProjectRecord, exposed: string, resolve: Resolve): Promise<RoutedTool> {
    const { endpoint, name } = await this.route(project, exposed, 'tool', resolve);
    const tool = (await this.catalog.toolsOf(endpoint).catch(() => [])).find((t) => t.name === name);
    return { endpoint, name, ...(tool && { tool }) };
  }

  async prompt(project: ProjectRecord, exposed: string, resolve: Resolve): Promise<RoutedPrompt> {
    return this.route(project, exposed, 'prompt', resolve);
  }

  /** Names offered by more than one enabled upstream (only relevant with namespacing off). */
  async collisions(project: ProjectRecord, kind: Kind, resolve: Resolve): Promise<Map<string, string[]>> {
    const owners = new Map<string, string[]>();
    for (const upstream of enabledUpstreams(project)) {
      const names = await this.namesOf(upstream, kind, resolve);
      for (const n of new Set(names)) owners.set(n, [...(owners.get(n) ?? []), upstream.alias]);
    }
    return new Map([...owners].filter(([, aliases]) => aliases.length > 1));
  }

  private async route(project: ProjectRecord, exposed: string, kind: Kind, resolve: Resolve) {
    const upstreams = enabledUpstreams(project);
    const unknown = () => new ProtocolError('InvalidParams', `Unknown ${kind}: ${exposed}`);
    if (project.namespacing) {
      const parts = splitNamespaced(exposed);
      const upstream = parts && upstreams.find((u) => u.alias === parts.alias);
      if (!parts || !upstream) throw unknown();
      return { endpoint: await resolve(upstream), name: parts.name };
    }
    const only = upstreams.length === 1 ? upstreams[0] : undefined;
    if (only) return { endpoint: await resolve(only), name: exposed };
    const owners: UpstreamRecord[] = [];
    for (const upstream of upstreams) {
      if ((await this.namesOf(upstream, kind, resolve)).includes(exposed)) owners.push(upstream);
    }
    const owner = owners[0];
    if (!owner) throw unknown();
    if (owners.length > 1) {
      throw new ProtocolError(
        'InvalidParams',
        `The ${kind} "${exposed}" is offered by several upstreams (${owners.map((o) => o.alias).join(', ')}); turn namespacing on`,
      );
    }
    return { endpoint: await resolve(owner), name: exposed };
  }

  /** An upstream's names; none when it cannot be reached or the caller has no credential for it. */
  private async namesOf(upstream: UpstreamRecord, kind: Kind, resolve: Resolve): Promise<string[]> {
    try {
      const endpoint = await resolve(upstream);
      const items: Array<Tool | Prompt> =
        kind === 'tool' ? await this.catalog.toolsOf(endpoint) : await this.catalog.promptsOf(endpoint);
      return items.map((i) => i.name);
    } catch {
      return [];
    }
  }
}

/** A project configuration the gateway refuses to serve. */
export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
}

/**
 * Refuses a project with namespacing off whose upstreams offer the same tool or prompt name. Checked
 * when configuration is applied, so the problem surfaces there and not on some later call. Upstreams
 * that cannot be reached (or need a user's own credential) are skipped and reported.
 */
export async function checkNamespacing(
  project: ProjectRecord,
  catalog: UpstreamCatalog,
  resolve: Resolve,
  onUnreachable: (alias: string, err: unknown) => void = () => {},
): Promise<void> {
  if (project.namespacing || enabledUpstreams(project).length < 2) return;
  const clashes: string[] = [];
  // MCP Apps views keep their `ui://` URIs too with namespacing off: two upstreams' views of one URI
  // would send a host following one tool's view to the other upstream (ui-resources.ts).
  for (const kind of ['tool', 'prompt', 'view'] as const) {
    const owners = new Map<string, string[]>();
    for (const upstream of enabledUpstreams(project)) {
      let names: string[];
      try {
        const endpoint = await resolve(upstream);
        names =
          kind === 'prompt'
            ? (await catalog.promptsOf(endpoint)).map((i) => i.name)
            : (await catalog.toolsOf(endpoint)).flatMap((t) =>
                kind === 'tool' ? [t.name] : (uiResourceUriOf(t) ?? []),
              );
      } catch (err) {
        if (kind === 'tool') onUnreachable(upstream.alias, err);
        continue;
      }
      for (const n of new Set(names)) owners.set(n, [...(owners.get(n) ?? []), upstream.alias]);
    }
    for (const [name, aliases] of owners) {
      if (aliases.length > 1)
        clashes.push(`${kind === 'view' ? 'UI resource' : kind} "${name}" (${aliases.join(', ')})`);
    }
  }
  if (clashes.length > 0) {
    throw new ConfigurationError(
      `Project "${project.slug}" turns namespacing off, but its upstreams share names: ${clashes.join('; ')}. ` +
        'Turn namespacing on or disable one of the upstreams.',
    );
  }
}
