/**
 * The gateway as an OAuth 2.1 client (dashboard sign-in, connecting upstreams), on oauth4webapi:
 * authorization code with PKCE (S256 only), the RFC 8707 resource indicator, the RFC 9207 `iss` check of
 * the response, dynamic client registration (RFC 7591), refresh (a rotated refresh token replaces the old
 * one) and revocation (RFC 7009). oauth4webapi builds the requests and checks the answers; the gateway
 * adds its own rules: every request through the guarded fetch (address policy, timeout, size bound,
 * http.ts), S256 required of the server, only bearer tokens kept, and errors that never hold a token or a
 * secret. Client secrets and tokens only ever travel in request bodies and the Authorization header.
 */
import { createHash } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import { asking, OAuthHttpError, requestOptions } from './http';
import type { AuthorizationServerMetadata } from './metadata';
import { serverOf } from './metadata';

export interface OAuthClientRegistration {
  clientId: string;
  /** Absent for a public client (token endpoint auth `none`). */
  clientSecret?: string;
}

export interface TokenSet {
  accessToken: string;
  refreshToken?: string;
  /** Epoch milliseconds; undefined when the server did not say. */
  expiresAt?: number;
  scope?: string;
  idToken?: string;
}

/** A random URL-safe secret (state, nonce, PKCE verifier): 32 bytes. */
export function randomSecret(): string {
  return oauth.generateRandomCodeVerifier();
}

/** Refuses a server that cannot do what the gateway requires of it (PKCE S256, the two endpoints). */
export function requireCodeFlow(as: AuthorizationServerMetadata): { authorize: string; token: string } {
  if (!as.authorizationEndpoint || !as.tokenEndpoint) {
    throw new OAuthHttpError(`${as.issuer} has no authorization or token endpoint`);
  }
  if (!as.codeChallengeMethods.includes('S256')) {
    throw new OAuthHttpError(`${as.issuer} does not offer PKCE with S256`);
  }
  return { authorize: as.authorizationEndpoint, token: as.tokenEndpoint };
}

export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  state: string;
  codeVerifier: string;
  resource?: string;
  scope?: string;
  nonce?: string;
}

/**
 * The authorization request URL. Synchronous, as its callers (the dashboard's sign-in and connect routes)
 * use it, so the S256 challenge is computed with node:crypto rather than oauth4webapi's
 * calculatePKCECodeChallenge, which is async (WebCrypto); the value is the same (RFC 7636 §4.2).
 */
export function authorizationUrl(as: AuthorizationServerMetadata, r: AuthorizationRequest): string {
  const url = new URL(requireCodeFlow(as).authorize);
  const params: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: r.clientId,
    redirect_uri: r.redirectUri,
    state: r.state,
    code_challenge: createHash('sha256').update(r.codeVerifier).digest('base64url'),
    code_challenge_method: 'S256',
    resource: r.resource,
    scope: r.scope,
    nonce: r.nonce,
  };
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') url.searchParams.set(k, v);
  return url.toString();
}

/**
 * RFC 9207: an `iss` in the authorization response must be the issuer the flow started with; a server
 * that promises `iss` must send it.
 */
export function checkResponseIssuer(as: AuthorizationServerMetadata, iss: string | null): void {
  if (iss === null) {
    if (as.issParameterSupported) throw new OAuthHttpError('The authorization response lacks "iss"');
    return;
  }
  if (iss !== as.issuer) throw new OAuthHttpError('The authorization response comes from another issuer');
}

/**
 * The code for tokens. A token request of grant `authorization_code` through oauth4webapi's
 * genericTokenEndpointRequest rather than its authorizationCodeGrantRequest, which takes the whole
 * callback as checked by its validateAuthResponse: the callers check state and `iss` themselves
 * (checkResponseIssuer) and verify the ID token with its nonce themselves (the sign-in's verifier).
 */
export function exchangeCode(
  as: AuthorizationServerMetadata,
  client: OAuthClientRegistration,
  r: { code: string; codeVerifier: string; redirectUri: string; resource?: string },
): Promise<TokenSet> {
  requireCodeFlow(as);
  return tokenRequest(as, client, 'authorization_code', {
    code: r.code,
    code_verifier: r.codeVerifier,
    redirect_uri: r.redirectUri,
    ...(r.resource !== undefined && { resource: r.resource }),
  });
}

export async function refreshTokens(
  as: AuthorizationServerMetadata,
  client: OAuthClientRegistration,
  r: { refreshToken: string; resource?: string },
): Promise<TokenSet> {
  requireCodeFlow(as);
  const tokens = await tokenRequest(as, client, 'refresh_token', {
    refresh_token: r.refreshToken,
    ...(r.resource !== undefined && { resource: r.resource }),
  });
  // Without rotation the server sends no new refresh token: the old one stays valid.
  return { ...tokens, refreshToken: tokens.refreshToken ?? r.refreshToken };
}

/**
 * One request at the token endpoint, sent and checked by oauth4webapi (an `access_token`, a
 * `token_type`, a numeric `expires_in`, claims of an ID token if one came); the gateway keeps only a
 * bearer token. Also used for RFC 8693 token exchange (token-exchange.ts).
 */
export async function tokenRequest(
  as: AuthorizationServerMetadata,
  client: OAuthClientRegistration,
  grantType: string,
  parameters: Record<string, string>,
): Promise<TokenSet> {
  const token = as.tokenEndpoint;
  if (!token) throw new OAuthHttpError(`${as.issuer} has no token endpoint`);
  const server = serverOf(as);
  const c = { client_id: client.clientId };
  const auth = clientAuthentication(as, client);
  const body = await asking(token, async () => {
    const reply = await oauth.genericTokenEndpointRequest(
      server,
      c,
      auth,
      grantType,
      parameters,
      requestOptions(as.via),
    );
    return oauth.processGenericTokenEndpointResponse(server, c, reply);
  });
  if (body.token_type !== 'bearer')
    throw new OAuthHttpError(`${as.issuer} did not issue a bearer access token`);
  const set: TokenSet = { accessToken: body.access_token };
  if (body.refresh_token) set.refreshToken = body.refresh_token;
  if (body.expires_in !== undefined && body.expires_in > 0)
    set.expiresAt = Date.now() + body.expires_in * 1000;
  if (body.scope) set.scope = body.scope;
  if (body.id_token) set.idToken = body.id_token;
  return set;
}

/** RFC 7591 dynamic registration of the gateway as a confidential web client with one redirect URI. */
export async function registerClient(
  as: AuthorizationServerMetadata,
  r: { redirectUri: string; scope?: string; clientName: string },
): Promise<OAuthClientRegistration> {
  if (!as.registrationEndpoint)
    throw new OAuthHttpError(`${as.issuer} offers no dynamic client registration`);
  const method = as.tokenEndpointAuthMethods.includes('client_secret_basic')
    ? 'client_secret_basic'
    : as.tokenEndpointAuthMethods.includes('client_secret_post')
      ? 'client_secret_post'
      : 'none';
  const registered = await asking(as.registrationEndpoint, async () => {
    const reply = await oauth.dynamicClientRegistrationRequest(
      serverOf(as),
      {
        client_name: r.clientName,
        redirect_uris: [r.redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: method,
        ...(r.scope !== undefined && { scope: r.scope }),
      },
      requestOptions(as.via),
    );
    return oauth.processDynamicClientRegistrationResponse(reply);
  });
  const secret = registered['client_secret'];
  return {
    clientId: registered.client_id,
    ...(typeof secret === 'string' && secret !== '' && { clientSecret: secret }),
  };
}

/**
 * RFC 7009 revocation of one token (`hint`: which kind it is) at the server's `revocation_endpoint`,
 * authenticated like a token request. False when the server offers no revocation; a refusal or a
 * server that cannot be reached is an OAuthHttpError (whose message never holds the token).
 */
export async function revokeToken(
  as: AuthorizationServerMetadata,
  client: OAuthClientRegistration,
  token: string,
  hint: 'access_token' | 'refresh_token',
): Promise<boolean> {
  if (!as.revocationEndpoint) return false;
  await asking(as.revocationEndpoint, async () => {
    const reply = await oauth.revocationRequest(
      serverOf(as),
      { client_id: client.clientId },
      clientAuthentication(as, client),
      token,
      { ...requestOptions(as.via), additionalParameters: { token_type_hint: hint } },
    );
    await oauth.processRevocationResponse(reply);
  });
  return true;
}

/**
 * Client authentication at the token and revocation endpoints: a public client sends its id only;
 * a confidential one uses Basic when the server offers it, else the form (RFC 6749 §2.3.1).
 */
export function clientAuthentication(
  as: AuthorizationServerMetadata,
  client: OAuthClientRegistration,
): oauth.ClientAuth {
  if (client.clientSecret === undefined) return oauth.None();
  return as.tokenEndpointAuthMethods.includes('client_secret_basic')
    ? oauth.ClientSecretBasic(client.clientSecret)
    : oauth.ClientSecretPost(client.clientSecret);
}
