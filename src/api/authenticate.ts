/**
 * Who is calling a project's MCP endpoint. A bearer token (user personal access token or project API
 * key) is required unless the project allows anonymous callers. Answers never tell an outsider whether a
 * project exists: without a valid token every project looks the same (401), and a valid token without
 * access to the project gets the same 404 as a project that does not exist. OAuth access tokens from
 * the configured issuers are accepted beside API tokens (api/oauth, docs/oauth.md).
 */
import { ProtocolError } from '../protocol';
import type { ControlPlane, Principal, ProjectRecord } from '../store/control-plane/types';
import { CallerToken } from '../gateway/caller-token';

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** The token of an `Authorization: Bearer <token>` header; undefined when absent or malformed. */
export function bearerToken(authorization: string): string | undefined {
  return BEARER.exec(authorization)?.[1];
}

export interface Caller {
  project: ProjectRecord;
  principal: Principal;
  /** The OAuth access token the caller signed in with (not an API token): token exchange uses it. */
  oauthToken?: CallerToken;
}

/**
 * Resolves an OAuth access token (a JWT) to its user, or null when it is valid but stands for no user;
 * throws when it is refused (api/oauth). Absent, only API tokens are known.
 */
export type AccessTokenPrincipal = (token: string) => Promise<Principal | null>;

const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export async function authenticateCaller(
  controlPlane: ControlPlane,
  slug: string,
  authorization: string,
  accessToken?: AccessTokenPrincipal,
): Promise<Caller> {
  const token = bearerToken(authorization);
  const project = await controlPlane.projectBySlug(slug);
  if (token === undefined) {
    if (authorization !== '') throw unauthorized('Malformed Authorization header; use "Bearer <token>"');
    if (project?.authMode === 'anonymous') return { project, principal: { kind: 'anonymous' } };
    throw unauthorized('This endpoint needs a bearer token');
  }
  const oauth = accessToken !== undefined && JWT.test(token);
  const principal = oauth ? await accessToken(token) : await controlPlane.authenticate(token);
  if (principal === undefined) throw unauthorized('Unknown or revoked token');
  // A valid access token whose subject is no user may call nothing: like a project it cannot see.
  if (!principal || !project || !(await controlPlane.canCallProject(principal, project))) {
    throw new ProtocolError('ProjectNotFound', `Project "${slug}" not found`);
  }
  return { project, principal, ...(oauth && { oauthToken: new CallerToken(token) }) };
}

function unauthorized(message: string): ProtocolError {
  return new ProtocolError('Unauthorized', message);
}
