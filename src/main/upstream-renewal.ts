/**
 * How an upstream authorization made by connecting with OAuth renews itself (store/control-plane/
 * renewal.ts decides when): the refresh token goes to the token endpoint of the authorization server
 * the gateway's client is registered at, with the resource the authorization is for (RFC 8707). And
 * how a revoked connection is revoked there too (RFC 7009).
 */
import type { Logger } from 'pino';
import type { RenewAuthorization, RevokeAtServer } from '../store/control-plane';
import type { OAuthClientStore } from '../store/oauth-clients';
import { refreshTokens, revokeToken } from '../upstream/oauth/client';
import { OAuthHttpError } from '../upstream/oauth/http';
import type { AuthorizationServerMetadata } from '../upstream/oauth/metadata';
import { authorizationServerMetadata } from '../upstream/oauth/metadata';

/** Authorization servers' metadata, looked up once per issuer (a failed look-up is tried again). */
function metadataCache(): (issuer: string) => Promise<AuthorizationServerMetadata> {
  const servers = new Map<string, Promise<AuthorizationServerMetadata>>();
  return (issuer: string) => {
    let found = servers.get(issuer);
    if (!found) {
      found = authorizationServerMetadata(issuer);
      servers.set(issuer, found);
      found.catch(() => servers.delete(issuer));
    }
    return found;
  };
}

export function upstreamRenewal(clients: OAuthClientStore, logger: Logger): RenewAuthorization {
  const metadataOf = metadataCache();
  return async ({ clientId, resource, refreshToken }) => {
    const client = await clients.byId(clientId);
    if (!client) return 'rejected';
    try {
      const as = await metadataOf(client.issuer);
      return await refreshTokens(as, client, { refreshToken, ...(resource !== null && { resource }) });
    } catch (err) {
      // The server says the refresh token is no good (expired, revoked, reused): the user connects again.
      if (err instanceof OAuthHttpError && err.oauthError === 'invalid_grant') return 'rejected';
      logger.warn({ err, issuer: client.issuer }, 'renewing an upstream authorization failed');
      return undefined;
    }
  };
}

/**
 * RFC 7009 when a connection is revoked (by its user, a project manager or the admin): the refresh token
 * first (servers revoke the whole grant with it, RFC 7009 §2.1), then the access token. Best effort: a
 * server without `revocation_endpoint`, or one that refuses or cannot be reached, is logged (issuer and
 * error only, never a token) and the local revocation stands.
 */
export function upstreamRevocation(clients: OAuthClientStore, logger: Logger): RevokeAtServer {
  const metadataOf = metadataCache();
  return async ({ clientId, accessToken, refreshToken }) => {
    const client = await clients.byId(clientId).catch(() => undefined);
    if (!client) return;
    try {
      const as = await metadataOf(client.issuer);
      if (!as.revocationEndpoint) {
        logger.info(
          { issuer: client.issuer },
          'the upstream authorization server offers no token revocation',
        );
        return;
      }
      if (refreshToken !== null) await revokeToken(as, client, refreshToken, 'refresh_token');
      // Many servers cannot revoke self-contained (JWT) access tokens and say so (RFC 7009 §2.2.1): those
      // end at their (short) expiry, and the grant is gone with the refresh token.
      await revokeToken(as, client, accessToken, 'access_token').catch((err: unknown) => {
        if (!(err instanceof OAuthHttpError && err.oauthError === 'unsupported_token_type')) throw err;
      });
    } catch (err) {
      const reason = err instanceof OAuthHttpError ? err.message : (err as Error).name;
      logger.warn(
        { issuer: client.issuer, reason },
        'revoking a connection at its authorization server failed',
      );
    }
  };
}
