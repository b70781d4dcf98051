/**
 * An upstream's endpoint with the credential a principal is entitled to. Shared by the gateway (each
 * request) and the task activities (each upstream call of a task, bound to the authorization the task
 * started with, so a task never silently switches to another credential).
 */
import { ProtocolError } from '../protocol';
import type { ControlPlane, Principal, ProjectRecord, UpstreamRecord } from '../store/control-plane/types';
import type { ResolvedEndpoint } from './routing';

export async function resolveEndpoint(
  controlPlane: ControlPlane,
  principal: Principal,
  project: ProjectRecord,
  upstream: UpstreamRecord,
): Promise<ResolvedEndpoint> {
  const credential = await controlPlane.upstreamCredential(principal, project, upstream);
  if (!credential.ok) {
    throw new ProtocolError('UpstreamAuthorizationMissing', credential.reason, {
      upstream: upstream.alias,
      ...(credential.connectUrl !== undefined && { connectUrl: credential.connectUrl }),
    });
  }
  return {
    alias: upstream.alias,
    project: project.slug,
    url: upstream.url,
    headers: credential.headers,
    // What an upstream offers may depend on whose credential asks: cache per upstream and credential.
    cacheKey: `${upstream.id}#${credential.authorizationId ?? upstream.auth.mode}`,
    // Which protocol era it speaks, as last probed: the upstream client picks its translation by it.
    upstreamId: upstream.id,
    ...(upstream.probe && { probe: upstream.probe }),
    // The project's own (lower) answer bounds: every call to it, the task's too, is read under them.
    answerLimits: {
      maxResponseBytes: project.limits.maxUpstreamResponseBytes,
      callDeadlineMs: project.limits.upstreamCallDeadlineMs,
    },
    resolved: true,
    authorizationId: credential.authorizationId,
  };
}

/** For a running task: the same resolution, refused when the credential is not the task's own. */
export async function resolveTaskEndpoint(
  controlPlane: ControlPlane,
  access: { project: string; upstream: string; principal: Principal; authorizationId: string | null },
): Promise<ResolvedEndpoint> {
  const project = await controlPlane.projectById(access.project);
  const upstream = project?.upstreams.find((u) => u.alias === access.upstream && u.enabled);
  if (!project || !upstream) {
    throw new ProtocolError('UpstreamRefused', `Upstream "${access.upstream}" is no longer configured`);
  }
  const endpoint = await resolveEndpoint(controlPlane, access.principal, project, upstream);
  if (endpoint.authorizationId !== access.authorizationId) {
    throw new ProtocolError(
      'UpstreamAuthorizationMissing',
      `The authorization for upstream "${access.upstream}" this task started with is no longer in effect`,
      { upstream: access.upstream },
    );
  }
  return endpoint;
}
