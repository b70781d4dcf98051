/**
 * The gateway as an OAuth 2.1 protected resource (MCP authorization, RFC 9728): each project's MCP
 * endpoint is a resource named `<public base URL>/v1/mcp/<project>`, described at
 * `/.well-known/oauth-protected-resource/v1/mcp/<project>` (the same document shape for every project
 * name, so it tells an outsider nothing about which projects exist), and a request without a valid
 * token is challenged with `WWW-Authenticate: Bearer resource_metadata="…"`.
 *
 * A valid token's subject becomes a user (store/control-plane/identities.ts); from there the ordinary
 * access rules apply. API tokens (`trp_`, `trk_`) keep working beside OAuth tokens.
 */
import type { Middleware } from 'koa';
import type { OAuthConfig } from '../../config/oauth';
import type { ExternalIdentity, IdentityPolicy } from '../../store/control-plane/identities';
import type { Principal } from '../../store/control-plane/types';
import type { VerifiedToken } from './verifier';
import { AccessTokenVerifier } from './verifier';

/** The part of the control plane that turns an external subject into a user. */
export interface IdentityDirectory {
  externalUser(identity: ExternalIdentity, policy: IdentityPolicy): Promise<string | undefined>;
}

const METADATA_PREFIX = '/.well-known/oauth-protected-resource';
const PROJECT_PATH = /^\/v1\/mcp\/([a-z0-9][a-z0-9-]{0,49})$/;

/** What a 401 or 403 challenge says besides where the resource metadata is. */
export interface Challenge {
  error?: 'invalid_token' | 'insufficient_scope';
  description?: string;
}

export class OAuthResourceServer {
  readonly verifier: AccessTokenVerifier;

  constructor(
    private readonly config: OAuthConfig,
    private readonly identities: IdentityDirectory,
    /** `http.publicBaseUrl`: never the request's Host, which the caller chooses. */
    private readonly publicBaseUrl: string,
  ) {
    this.verifier = new AccessTokenVerifier(config.issuers);
  }

  resourceUrl(slug: string): string {
    return `${this.publicBaseUrl}/v1/mcp/${encodeURIComponent(slug)}`;
  }

  /**
   * The user an access token stands for: null when the token is valid but its subject is no user (not
   * provisioned); a TokenRefusal or IssuerUnavailable when the token cannot be accepted.
   */
  async principal(token: string, resource: string): Promise<Principal | null> {
    const userId = await this.userOf(await this.verifier.verify(token, resource));
    return userId === undefined ? null : { kind: 'user', userId };
  }

  /** The user a verified token (access or ID token) stands for: found, linked or provisioned; or none. */
  async userOf({ issuer, claims, subject }: VerifiedToken): Promise<string | undefined> {
    const text = (claim: string) =>
      typeof claims[claim] === 'string' ? (claims[claim] as string) : undefined;
    const groups = claims[issuer.groupsClaim];
    const handle = text(issuer.handleClaim) ?? text('email');
    const name = text(issuer.nameClaim);
    return this.identities.externalUser(
      {
        issuer: issuer.issuer,
        subject,
        ...(handle !== undefined && { handle }),
        ...(name !== undefined && { name }),
        ...(Array.isArray(groups) && { groups: groups.filter((g): g is string => typeof g === 'string') }),
      },
      {
        provision: issuer.provisionUsers,
        linkExisting: issuer.linkExistingUsers,
        groupTeams: issuer.groupTeams,
      },
    );
  }

  /** `WWW-Authenticate` of a refused MCP request (RFC 6750 §3, RFC 9728 §5.1). */
  challenge(slug: string, c: Challenge = {}): string {
    const scopes = this.verifier.requiredScopes();
    const params: Array<[string, string]> = [
      ['resource_metadata', `${this.publicBaseUrl}${METADATA_PREFIX}/v1/mcp/${encodeURIComponent(slug)}`],
    ];
    if (scopes.length > 0) params.push(['scope', scopes.join(' ')]);
    if (c.error !== undefined) params.push(['error', c.error]);
    if (c.description !== undefined) params.push(['error_description', c.description]);
    return `Bearer ${params.map(([k, v]) => `${k}="${v.replace(/["\\]/g, '')}"`).join(', ')}`;
  }

  /** `GET /.well-known/oauth-protected-resource/v1/mcp/{project}`: the project's resource metadata. */
  metadataRoute(): Middleware {
    return async (ctx, next) => {
      if (!ctx.path.startsWith(`${METADATA_PREFIX}/`)) return next();
      const slug = PROJECT_PATH.exec(ctx.path.slice(METADATA_PREFIX.length))?.[1];
      if (slug === undefined || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
      const scopes = this.verifier.requiredScopes();
      // Public metadata: browser-based MCP clients read it from their own origin.
      ctx.set('Access-Control-Allow-Origin', '*');
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.body = {
        resource: this.resourceUrl(slug),
        authorization_servers: this.config.issuers.map((i) => i.issuer),
        ...(scopes.length > 0 && { scopes_supported: scopes }),
        bearer_methods_supported: ['header'],
        resource_name: `TaskRouter project ${slug}`,
      };
    };
  }
}
