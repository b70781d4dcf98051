/**
 * An upstream's endpoint with the credential a principal is entitled to. Shared by the gateway (each
 * request) and the task activities (each upstream call of a task, bound to the authorization the task
 * started with, so a task never silently switches to another credential). It lives with the control
 * plane, whose records and credentials it reads, so the worker takes it from the store floor rather than
 * from the gateway's.
 */
import type { UpstreamEndpoint } from '../../protocol';
import { ProtocolError } from '../../protocol';
import { addressOf } from './upstream-addresses';
import type { ControlPlane, Principal, ProjectRecord, UpstreamRecord } from './types';
import type { CredentialSubject } from './token-exchange';

/**
 * Where an upstream is and with which credential: what the upstream client calls (`UpstreamEndpoint`,
 * defined with the protocol, since the store does not import the client). Only a resolution makes one
 * (`resolved`), so an upstream record, which has the same address fields, can never be called by mistake
 * without its credential.
 */
export interface ResolvedEndpoint extends UpstreamEndpoint {
  readonly resolved: true;
  authorizationId: string | null;
}

export async function resolveEndpoint(
  controlPlane: ControlPlane,
  principal: Principal,
  project: ProjectRecord,
  upstream: UpstreamRecord,
  /** The caller's OAuth access token (token exchange), or that a running task asks. */
  subject?: CredentialSubject,
): Promise<ResolvedEndpoint> {
  const credential = await controlPlane.upstreamCredential(principal, project, upstream, subject);
  if (!credential.ok) {
    throw new ProtocolError('UpstreamAuthorizationMissing', credential.reason, {
      upstream: upstream.alias,
      ...(credential.connectUrl !== undefined && { connectUrl: credential.connectUrl }),
      ...(credential.tokenExchange !== undefined && { tokenExchange: credential.tokenExchange }),
    });
  }
  // The record (cached) and the credential (read now, or cached apart) may straddle a re-pointing: a
  // credential is never sent anywhere but where it was given, in either direction.
  if (credential.boundTo !== undefined && addressOf(credential.boundTo) !== addressOf(upstream.url)) {
    throw new ProtocolError(
      'UpstreamUnavailable',
      `Upstream "${upstream.alias}" was re-pointed while this request was served; try again`,
      { upstream: upstream.alias },
    );
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
    addressApproved: upstream.addressApproved,
  };
}

/**
 * For a running task: the same resolution, refused when the credential is not the task's own or the
 * upstream now points elsewhere than where the task was created (its task id means nothing there, and
 * no credential of the task's may go there): the task then fails with that reason (docs/admin.md).
 */
export async function resolveTaskEndpoint(
  controlPlane: ControlPlane,
  access: {
    project: string;
    upstream: string;
    principal: Principal;
    authorizationId: string | null;
    upstreamAddress?: string;
  },
): Promise<ResolvedEndpoint> {
  const project = await controlPlane.servedProjectById(access.project);
  const upstream = project?.upstreams.find((u) => u.alias === access.upstream && u.enabled);
  if (!project || !upstream) {
    throw new ProtocolError('UpstreamRefused', `Upstream "${access.upstream}" is no longer configured`);
  }
  if (access.upstreamAddress !== undefined && addressOf(upstream.url) !== access.upstreamAddress) {
    throw new ProtocolError(
      'UpstreamRefused',
      `Upstream "${access.upstream}" was re-pointed to another address after this task started; the task cannot continue there`,
      { upstream: access.upstream },
    );
  }
  const endpoint = await resolveEndpoint(controlPlane, access.principal, project, upstream, { task: true });
  if (endpoint.authorizationId !== access.authorizationId) {
    throw new ProtocolError(
      'UpstreamAuthorizationMissing',
      `The authorization for upstream "${access.upstream}" this task started with is no longer in effect`,
      { upstream: access.upstream },
    );
  }
  return endpoint;
}
