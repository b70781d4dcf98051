/**
 * The gateway as an OAuth 2.1 client (dashboard sign-in, connecting upstreams): authorization code with
 * PKCE (S256 only), the RFC 8707 resource indicator, the RFC 9207 `iss` check of the response, and
 * dynamic client registration (RFC 7591), refresh (a rotated refresh token replaces the old one) and
 * revocation (RFC 7009). Client secrets and tokens only ever travel in request bodies and the
 * Authorization header, never in URLs or error messages.
 */
import { createHash, randomBytes } from 'node:crypto';
import { OAuthHttpError, post, str } from './http';
import type { AuthorizationServerMetadata } from './metadata';

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
  return randomBytes(32).toString('base64url');
}

export function pkceChallenge(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
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

export function authorizationUrl(as: AuthorizationServerMetadata, r: AuthorizationRequest): string {
  const url = new URL(requireCodeFlow(as).authorize);
  const params: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: r.clientId,
    redirect_uri: r.redirectUri,
    state: r.state,
    code_challenge: pkceChallenge(r.codeVerifier),
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

export function exchangeCode(
  as: AuthorizationServerMetadata,
  client: OAuthClientRegistration,
  r: { code: string; codeVerifier: string; redirectUri: string; resource?: string },
): Promise<TokenSet> {
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code: r.code,
    code_verifier: r.codeVerifier,
    redirect_uri: r.redirectUri,
  });
  if (r.resource !== undefined) form.set('resource', r.resource);
  return tokenRequest(as, client, form);
}

export async function refreshTokens(
  as: AuthorizationServerMetadata,
  client: OAuthClientRegistration,
  r: { refreshToken: string; resource?: string },
): Promise<TokenSet> {
  const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: r.refreshToken });
  if (r.resource !== undefined) form.set('resource', r.resource);
  const tokens = await tokenRequest(as, client, form);
  // Without rotation the server sends no new refresh token: the old one stays valid.
  return { ...tokens, refreshToken: tokens.refreshToken ?? r.refreshToken };
}

async function tokenRequest(
  as: AuthorizationServerMetadata,
  client: OAuthClientRegistration,
  form: URLSearchParams,
): Promise<TokenSet> {
  const { token } = requireCodeFlow(as);
  const body = await post(token, form, clientAuthentication(as, client, form), as.via);
  const accessToken = str(body, 'access_token');
  const tokenType = str(body, 'token_type');
  if (accessToken === undefined || tokenType?.toLowerCase() !== 'bearer') {
    throw new OAuthHttpError(`${as.issuer} did not issue a bearer access token`);
  }
  const expiresIn = typeof body['expires_in'] === 'number' ? body['expires_in'] : undefined;
  const set: TokenSet = { accessToken };
  const refreshToken = str(body, 'refresh_token');
  if (refreshToken !== undefined) set.refreshToken = refreshToken;
  if (expiresIn !== undefined && expiresIn > 0) set.expiresAt = Date.now() + expiresIn * 1000;
  const scope = str(body, 'scope');
  if (scope !== undefined) set.scope = scope;
  const idToken = str(body, 'id_token');
  if (idToken !== undefined) set.idToken = idToken;
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
  const body = await post(
    as.registrationEndpoint,
    {
      client_name: r.clientName,
      redirect_uris: [r.redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: method,
      ...(r.scope !== undefined && { scope: r.scope }),
    },
    {},
    as.via,
  );
  const clientId = str(body, 'client_id');
  if (clientId === undefined) throw new OAuthHttpError(`${as.issuer} registered no client id`);
  const clientSecret = str(body, 'client_secret');
  return { clientId, ...(clientSecret !== undefined && { clientSecret }) };
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
  const form = new URLSearchParams({ token, token_type_hint: hint });
  await post(as.revocationEndpoint, form, clientAuthentication(as, client, form), as.via);
  return true;
}

/** Client authentication at the token and revocation endpoints: Basic when offered, else in the form. */
function clientAuthentication(
  as: AuthorizationServerMetadata,
  client: OAuthClientRegistration,
  form: URLSearchParams,
): Record<string, string> {
  if (client.clientSecret === undefined) {
    form.set('client_id', client.clientId);
    return {};
  }
  if (as.tokenEndpointAuthMethods.includes('client_secret_basic')) {
    return { authorization: basicAuth(client.clientId, client.clientSecret) };
  }
  form.set('client_id', client.clientId);
  form.set('client_secret', client.clientSecret);
  return {};
}

/** RFC 6749 §2.3.1: both parts form-encoded, then Basic. */
function basicAuth(clientId: string, secret: string): string {
  const pair = `${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`;
  return `Basic ${Buffer.from(pair).toString('base64')}`;
}
