/**
 * RFC 8693 token exchange: the gateway, as a client of a `per_user` upstream's configured issuer, trades
 * the caller's own OAuth access token for one that is good at the upstream (docs/oauth.md, "Token
 * exchange"). `resource` is the upstream (RFC 8707); `audience` and `scope` go as configured. The client
 * authenticates like at any token endpoint (Basic when offered, else in the form; a public client sends
 * its id only). Neither token nor secret ever reaches an error message (http.ts).
 */
import { OAuthHttpError, post, str } from './http';
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

export async function exchangeToken(
  as: AuthorizationServerMetadata,
  r: TokenExchangeRequest,
): Promise<ExchangedToken> {
  if (!as.tokenEndpoint) throw new OAuthHttpError(`${as.issuer} has no token endpoint`);
  const form = new URLSearchParams({
    grant_type: TOKEN_EXCHANGE_GRANT,
    subject_token: r.subjectToken,
    subject_token_type: ACCESS_TOKEN_TYPE,
    requested_token_type: ACCESS_TOKEN_TYPE,
    resource: r.resource,
  });
  if (r.audience !== undefined) form.set('audience', r.audience);
  if (r.scope !== undefined) form.set('scope', r.scope);
  const headers: Record<string, string> = {};
  if (r.clientSecret !== undefined && as.tokenEndpointAuthMethods.includes('client_secret_basic')) {
    const pair = `${encodeURIComponent(r.clientId)}:${encodeURIComponent(r.clientSecret)}`;
    headers['authorization'] = `Basic ${Buffer.from(pair).toString('base64')}`;
  } else {
    form.set('client_id', r.clientId);
    if (r.clientSecret !== undefined) form.set('client_secret', r.clientSecret);
  }
  const body = await post(as.tokenEndpoint, form, headers, as.via);
  const accessToken = str(body, 'access_token');
  const tokenType = str(body, 'token_type')?.toLowerCase();
  // RFC 8693 §2.2.1: `token_type` says how to use it; only a bearer token can be sent on.
  if (accessToken === undefined || tokenType !== 'bearer') {
    throw new OAuthHttpError(`${as.issuer} did not issue a bearer token in the exchange`);
  }
  const expiresIn = typeof body['expires_in'] === 'number' ? body['expires_in'] : undefined;
  return {
    accessToken,
    ...(expiresIn !== undefined && expiresIn > 0 && { expiresAt: Date.now() + expiresIn * 1000 }),
  };
}
