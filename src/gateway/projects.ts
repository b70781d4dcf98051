/** Projects and their upstreams, from configuration (the control-plane store replaces this later). */
import type { ProjectConfig, UpstreamConfig } from '../config/config';
import type { UpstreamEndpoint } from '../upstream/client';

export interface ProjectRegistry {
  get(slug: string): ProjectConfig | undefined;
  /** The endpoint of a project's upstream; throws for an unknown pair (a configuration change). */
  endpoint(project: string, alias: string): UpstreamEndpoint;
}

export function staticProjectRegistry(projects: readonly ProjectConfig[]): ProjectRegistry {
  const bySlug = new Map(projects.map((p) => [p.slug, p]));
  return {
    get: (slug) => bySlug.get(slug),
    endpoint(project, alias) {
      const upstream = bySlug.get(project)?.upstreams.find((u) => u.alias === alias);
      if (!upstream) throw new Error(`Upstream "${alias}" is not configured for project "${project}"`);
      return toEndpoint(upstream);
    },
  };
}

export function toEndpoint(u: UpstreamConfig): UpstreamEndpoint {
  return { alias: u.alias, url: u.url, headers: u.headers };
}
