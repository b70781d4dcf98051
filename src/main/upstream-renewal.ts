/**
 * How an upstream authorization made by connecting with OAuth renews itself (store/control-plane/
 * renewal.ts decides when): the refresh token goes to the token endpoint of the authorization server
 * the gateway's client is registered at, with the resource the authorization is for (RFC 8707). And
 * how a revoked connection is revoked there too (RFC 7009).
 */
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { ExchangeToken, RenewAuthorization, RevokeAtServer } from '../store/control-plane';
import type { OAuthClientStore } from '../store/control-plane/oauth-clients';
import { refreshTokens, revokeToken } from '../upstream/oauth/client';
import { OAuthHttpError } from '../upstream/oauth/http';
import type { AuthorizationServerMetadata } from '../upstream/oauth/metadata';
import { authorizationServerMetadata } from '../upstream/oauth/metadata';
import { exchangeToken } from '../upstream/oauth/token-exchange';

/**
 * Authorization servers' metadata, looked up once per issuer and way of reaching it (a failed look-up is
 * tried again). For an upstream no operator approved, the server is reached through the address policy
 * (`checkedVia`): its endpoints came from the upstream, and a manager chose the upstream.
 */
function metadataCache(
  checkedVia: Dispatcher | undefined,
): (issuer: string, addressApproved: boolean) => Promise<AuthorizationServerMetadata> {
  const servers = new Map<string, Promise<AuthorizationServerMetadata>>();
  return (issuer, addressApproved) => {
    const via = addressApproved ? undefined : checkedVia;
    const key = `${via ? 'checked' : 'operator'}|${issuer}`;
    let found = servers.get(key);
    if (!found) {
      found = authorizationServerMetadata(issuer, via);
      servers.set(key, found);
      found.catch(() => servers.delete(key));
    }
    return found;
  };
}

export function upstreamRenewal(
  clients: OAuthClientStore,
  logger: Logger,
  checkedVia?: Dispatcher,
): RenewAuthorization {
  const metadataOf = metadataCache(checkedVia);
  return async ({ clientId, resource, refreshToken, addressApproved }) => {
    const client = await clients.byId(clientId);
    if (!client) return 'rejected';
    try {
      const as = await metadataOf(client.issuer, addressApproved);
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
export function upstreamRevocation(
  clients: OAuthClientStore,
  logger: Logger,
  checkedVia?: Dispatcher,
): RevokeAtServer {
  const metadataOf = metadataCache(checkedVia);
  return async ({ clientId, client: given, accessToken, refreshToken, addressApproved }) => {
    // The client as it was when the connection ended, when that is given (its row may be gone since).
    const client = given ?? (await clients.byId(clientId).catch(() => undefined));
    if (!client) return;
    try {
      const as = await metadataOf(client.issuer, addressApproved);
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

/**
 * RFC 8693 token exchange for `per_user` upstreams that say so (store/control-plane/token-exchange.ts
 * decides when): the issuer's token endpoint from its metadata, reached through the address policy unless
 * an operator set the upstream. Failures are logged with the issuer and the error only.
 */
export function upstreamTokenExchange(logger: Logger, checkedVia?: Dispatcher): ExchangeToken {
  const metadataOf = metadataCache(checkedVia);
  return async ({ issuer, addressApproved, ...request }) => {
    try {
      const as = await metadataOf(issuer, addressApproved);
      return await exchangeToken(as, request);
    } catch (err) {
      logger.warn({ err, issuer }, 'exchanging a caller token for an upstream failed');
      throw err;
    }
  };
}
