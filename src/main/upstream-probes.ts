/**
 * Probing upstreams when they are added or changed (admin API, configuration, bootstrap file): which MCP
 * era each speaks, recorded with the upstream and shown in its admin view (src/upstream/eras/switch.ts does the
 * probing and the recording). The probe uses the project's credential where there is one; an upstream
 * that needs each user's own credential is probed without one (its era is then probed again on first use).
 */
import { resolveEndpoint } from '../store/control-plane/endpoints';
import type { ControlPlaneStore } from '../store/control-plane';
import type { Principal, ProjectRecord, UpstreamRecord } from '../store/control-plane/types';
import type { UpstreamClient, UpstreamEndpoint } from '../upstream/client';

const PROBER: Principal = { kind: 'admin', via: 'bootstrap' };

async function endpointFor(
  controlPlane: ControlPlaneStore,
  project: ProjectRecord,
  upstream: UpstreamRecord,
): Promise<UpstreamEndpoint> {
  try {
    return await resolveEndpoint(controlPlane, PROBER, project, upstream);
  } catch {
    return {
      alias: upstream.alias,
      project: project.slug,
      url: upstream.url,
      cacheKey: `${upstream.id}#probe`,
      upstreamId: upstream.id,
      addressApproved: upstream.addressApproved,
    };
  }
}

/** Probes one upstream of a project (by slug or id, and alias) and records what it found. */
export async function probeUpstream(
  controlPlane: ControlPlaneStore,
  client: UpstreamClient,
  projectRef: string,
  alias: string,
): Promise<void> {
  const view = await controlPlane.getProject(PROBER, projectRef);
  const project = await controlPlane.projectById(view.id);
  const upstream = project?.upstreams.find((u) => u.alias === alias || u.id === alias);
  if (!project || !upstream?.enabled) return;
  await client.probe(await endpointFor(controlPlane, project, upstream));
}

/**
 * At start-up: probes every enabled upstream that was never probed or changed since its last probe
 * (configuration and bootstrap changes), all at once; each probe is bounded by its own time limit.
 */
export async function probeChangedUpstreams(
  controlPlane: ControlPlaneStore,
  client: UpstreamClient,
): Promise<void> {
  const probes: Promise<void>[] = [];
  for (const view of await controlPlane.listProjects(PROBER)) {
    const stale = view.upstreams.filter(
      (u) => u.enabled && (u.probe.probedAt === null || u.probe.probedAt < u.updatedAt),
    );
    if (stale.length === 0) continue;
    const project = await controlPlane.projectById(view.id);
    for (const upstream of project?.upstreams.filter((u) => stale.some((s) => s.id === u.id)) ?? []) {
      // A failed probe is logged by the client (the detail is for the operator, src/upstream/eras/switch.ts).
      probes.push(
        endpointFor(controlPlane, project as ProjectRecord, upstream).then(async (endpoint) => {
          await client.probe(endpoint);
        }),
      );
    }
  }
  await Promise.all(probes);
}
