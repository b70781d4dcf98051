/**
 * How an upstream authorization made by connecting with OAuth renews itself (store/control-plane/
 * renewal.ts decides when): the refresh token goes to the token endpoint of the authorization server
 * the gateway's client is registered at, with the resource the authorization is for (RFC 8707).
 */
import type { Logger } from 'pino';
import type { RenewAuthorization } from '../store/control-plane';
import type { OAuthClientStore } from '../store/oauth-clients';
import { refreshTokens } from '../upstream/oauth/client';
import { OAuthHttpError } from '../upstream/oauth/http';
import type { AuthorizationServerMetadata } from '../upstream/oauth/metadata';
import { authorizationServerMetadata } from '../upstream/oauth/metadata';

export function upstreamRenewal(clients: OAuthClientStore, logger: Logger): RenewAuthorization {
  const servers = new Map<string, Promise<AuthorizationServerMetadata>>();
  const metadataOf = (issuer: string) => {
    let found = servers.get(issuer);
    if (!found) {
      found = authorizationServerMetadata(issuer);
      servers.set(issuer, found);
      found.catch(() => servers.delete(issuer));
    }
    return found;
  };
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
