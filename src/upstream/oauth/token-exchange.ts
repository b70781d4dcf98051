/**
 * RFC 8693 token exchange: the gateway, as a client of a `per_user` upstream's configured issuer, trades
 * the caller's own OAuth access token for one that is good at the upstream (docs/oauth.md, "Token
 * exchange"). `resource` is the upstream (RFC 8707); `audience` and `scope` go as configured. The client
 * authenticates like at any token endpoint (Basic when offered, else in the form; a public client sends
 * its id only): one token request through oauth4webapi's genericTokenEndpointRequest (client.ts).
 * Neither token nor secret ever reaches an error message (http.ts).
 */
import { tokenRequest } from './client';
import type { AuthorizationServerMetadata } from './metadata';

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

export interface TokenExchangeRequest {
  clientId: string;
  clientSecret?: string;
  subjectToken: string;
  resource: string;
  audience?: string;
  scope?: string;
}

export interface ExchangedToken {
  accessToken: string;
  /** Epoch milliseconds; undefined when the issuer did not say. */
  expiresAt?: number;
}

/** RFC 8693 §2.2.1: `token_type` says how to use the token; only a bearer token can be sent on. */
export async function exchangeToken(
  as: AuthorizationServerMetadata,
  r: TokenExchangeRequest,
): Promise<ExchangedToken> {
  const issued = await tokenRequest(
    as,
    { clientId: r.clientId, ...(r.clientSecret !== undefined && { clientSecret: r.clientSecret }) },
    TOKEN_EXCHANGE_GRANT,
    {
      subject_token: r.subjectToken,
      subject_token_type: ACCESS_TOKEN_TYPE,
      requested_token_type: ACCESS_TOKEN_TYPE,
      resource: r.resource,
      ...(r.audience !== undefined && { audience: r.audience }),
      ...(r.scope !== undefined && { scope: r.scope }),
    },
  );
  return {
    accessToken: issued.accessToken,
    ...(issued.expiresAt !== undefined && { expiresAt: issued.expiresAt }),
  };
}
