/**
 * Which upstream owns a name, and the name the upstream knows it by. With namespacing on the alias is
 * part of the name; with it off the catalog decides, and a name offered by two upstreams belongs to
 * neither (the configuration check refuses such projects; this covers upstreams that change later).
 */
import type { ProjectConfig } from '../config/config';
import type { Tool } from '../protocol';
import { ProtocolError } from '../protocol';
import type { UpstreamEndpoint } from '../upstream/client';
import type { Prompt, UpstreamCatalog } from './catalog';
import { splitNamespaced } from './naming';
import { toEndpoint } from './projects';

export function enabledUpstreams(project: ProjectConfig): UpstreamEndpoint[] {
  return project.upstreams.filter((u) => u.enabled).map(toEndpoint);
}

export interface RoutedTool {
  endpoint: UpstreamEndpoint;
  name: string;
  /** The upstream's tool definition, when its catalog lists it. */
  tool?: Tool;
}

export interface RoutedPrompt {
  endpoint: UpstreamEndpoint;
  name: string;
}

type Kind = 'tool' | 'prompt';

export class Router {
  constructor(private readonly catalog: UpstreamCatalog) {}

  async tool(project: ProjectConfig, exposed: string): Promise<RoutedTool> {
    const { endpoint, name } = await this.route(project, exposed, 'tool');
    const tool = (await this.catalog.toolsOf(endpoint).catch(() => [])).find((t) => t.name === name);
    return { endpoint, name, ...(tool && { tool }) };
  }

  async prompt(project: ProjectConfig, exposed: string): Promise<RoutedPrompt> {
    return this.route(project, exposed, 'prompt');
  }

  /** Names offered by more than one enabled upstream (only relevant with namespacing off). */
  async collisions(project: ProjectConfig, kind: Kind): Promise<Map<string, string[]>> {
    const owners = new Map<string, string[]>();
    for (const endpoint of enabledUpstreams(project)) {
      const names: string[] = await this.names(endpoint, kind).catch(() => []);
      for (const n of new Set(names)) owners.set(n, [...(owners.get(n) ?? []), endpoint.alias]);
    }
    return new Map([...owners].filter(([, aliases]) => aliases.length > 1));
  }

  private async route(project: ProjectConfig, exposed: string, kind: Kind) {
    const upstreams = enabledUpstreams(project);
    const unknown = () => new ProtocolError('InvalidParams', `Unknown ${kind}: ${exposed}`);
    if (project.namespacing) {
      const parts = splitNamespaced(exposed);
      const endpoint = parts && upstreams.find((u) => u.alias === parts.alias);
      if (!parts || !endpoint) throw unknown();
      return { endpoint, name: parts.name };
    }
    const only = upstreams.length === 1 ? upstreams[0] : undefined;
    if (only) return { endpoint: only, name: exposed };
    const owners: UpstreamEndpoint[] = [];
    for (const endpoint of upstreams) {
      const names: string[] = await this.names(endpoint, kind).catch(() => []);
      if (names.includes(exposed)) owners.push(endpoint);
    }
    const owner = owners[0];
    if (!owner) throw unknown();
    if (owners.length > 1) {
      throw new ProtocolError(
        'InvalidParams',
        `The ${kind} "${exposed}" is offered by several upstreams (${owners.map((o) => o.alias).join(', ')}); turn namespacing on`,
      );
    }
    return { endpoint: owner, name: exposed };
  }

  private async names(endpoint: UpstreamEndpoint, kind: Kind): Promise<string[]> {
    const items: Array<Tool | Prompt> =
      kind === 'tool' ? await this.catalog.toolsOf(endpoint) : await this.catalog.promptsOf(endpoint);
    return items.map((i) => i.name);
  }
}

/** A project configuration the gateway refuses to serve. */
export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
}

/**
 * Refuses a project with namespacing off whose upstreams offer the same tool or prompt name. Checked
 * when configuration is applied, so the problem surfaces there and not on some later call. Upstreams
 * that cannot be reached are skipped (and reported through `onUnreachable`).
 */
export async function checkNamespacing(
  project: ProjectConfig,
  catalog: UpstreamCatalog,
  onUnreachable: (alias: string, err: unknown) => void = () => {},
): Promise<void> {
  if (project.namespacing || enabledUpstreams(project).length < 2) return;
  const clashes: string[] = [];
  for (const kind of ['tool', 'prompt'] as const) {
    const owners = new Map<string, string[]>();
    for (const endpoint of enabledUpstreams(project)) {
      let names: string[];
      try {
        names = (kind === 'tool' ? await catalog.toolsOf(endpoint) : await catalog.promptsOf(endpoint)).map(
          (i) => i.name,
        );
      } catch (err) {
        if (kind === 'tool') onUnreachable(endpoint.alias, err);
        continue;
      }
      for (const n of new Set(names)) owners.set(n, [...(owners.get(n) ?? []), endpoint.alias]);
    }
    for (const [name, aliases] of owners) {
      if (aliases.length > 1) clashes.push(`${kind} "${name}" (${aliases.join(', ')})`);
    }
  }
  if (clashes.length > 0) {
    throw new ConfigurationError(
      `Project "${project.slug}" turns namespacing off, but its upstreams share names: ${clashes.join('; ')}. ` +
        'Turn namespacing on or disable one of the upstreams.',
    );
  }
}
