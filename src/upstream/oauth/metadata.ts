/**
 * Discovery (MCP authorization, RFC 9728, RFC 8414, OpenID Connect Discovery): where an authorization
 * server's endpoints and keys are, and which authorization server protects an MCP server. Every
 * document is checked against the identifier it was looked up by (`issuer`, `resource`); one that names
 * something else is not used.
 */
import type { Dispatcher } from 'undici';
import * as oauth from 'oauth4webapi';
import { guardedFetch, OAuthAddressRefusedError, OAuthHttpError, requestOptions, str, strings } from './http';

export interface AuthorizationServerMetadata {
  issuer: string;
  authorizationEndpoint?: string;
  tokenEndpoint?: string;
  registrationEndpoint?: string;
  revocationEndpoint?: string;
  jwksUri?: string;
  codeChallengeMethods: string[];
  tokenEndpointAuthMethods: string[];
  scopesSupported?: string[];
  /** RFC 9207: the server adds `iss` to authorization responses. */
  issParameterSupported: boolean;
  /** The server takes an HTTPS URL of a client metadata document as `client_id` (CIMD draft). */
  clientIdMetadataDocumentSupported: boolean;
  /**
   * What the metadata was fetched through, and so every endpoint it names is called through (token,
   * registration, revocation): the address policy's dispatcher for an upstream a manager set.
   */
  via?: Dispatcher;
}

/**
 * The authorization server's metadata, from the well-known URLs in the MCP specification's order (RFC
 * 8414 with path insertion, OpenID Connect with path insertion, OpenID Connect appended), each fetched and
 * checked by oauth4webapi (a 200 JSON object whose `issuer` is the one asked for). The first and last
 * URLs are oauth4webapi's own `oauth2` and `oidc` discovery; the middle one, which only the MCP
 * specification names, is fetched here. A URL that answers with anything but such a document is passed
 * over; a document naming another issuer, or a server that cannot be reached, ends the search.
 */
export async function authorizationServerMetadata(
  issuer: string,
  via?: Dispatcher,
): Promise<AuthorizationServerMetadata> {
  const url = new URL(issuer);
  const options = requestOptions(via);
  const path = url.pathname.replace(/\/+$/, '');
  const candidates: Array<() => Promise<Response>> = [
    () => oauth.discoveryRequest(url, { ...options, algorithm: 'oauth2' }),
    ...(path === ''
      ? []
      : [() => guardedFetch(`${url.origin}/.well-known/openid-configuration${path}`, {}, via)]),
    () => oauth.discoveryRequest(url, { ...options, algorithm: 'oidc' }),
  ];
  for (const request of candidates) {
    const reply = await request();
    let doc: oauth.AuthorizationServer;
    try {
      doc = await oauth.processDiscoveryResponse(url, reply);
    } catch (err) {
      if (err instanceof oauth.OperationProcessingError && err.code !== oauth.JSON_ATTRIBUTE_COMPARISON)
        continue;
      // Another issuer, or one that is not a URL (a TypeError from oauth4webapi's comparison).
      throw new OAuthHttpError(`The metadata found for ${issuer} names another issuer`);
    }
    return { ...toMetadata(issuer, doc as Record<string, unknown>), ...(via && { via }) };
  }
  throw new OAuthHttpError(`No authorization server metadata found for ${issuer}`);
}

/** The metadata as oauth4webapi takes it (snake_case, as the server published it). */
export function serverOf(as: AuthorizationServerMetadata): oauth.AuthorizationServer {
  return {
    issuer: as.issuer,
    authorization_endpoint: as.authorizationEndpoint,
    token_endpoint: as.tokenEndpoint,
    registration_endpoint: as.registrationEndpoint,
    revocation_endpoint: as.revocationEndpoint,
    code_challenge_methods_supported: as.codeChallengeMethods,
    token_endpoint_auth_methods_supported: as.tokenEndpointAuthMethods,
    authorization_response_iss_parameter_supported: as.issParameterSupported,
  };
}

function toMetadata(issuer: string, doc: Record<string, unknown>): AuthorizationServerMetadata {
  const m: AuthorizationServerMetadata = {
    issuer,
    codeChallengeMethods: strings(doc, 'code_challenge_methods_supported') ?? [],
    tokenEndpointAuthMethods: strings(doc, 'token_endpoint_auth_methods_supported') ?? [
      'client_secret_basic',
    ],
    issParameterSupported: doc['authorization_response_iss_parameter_supported'] === true,
    clientIdMetadataDocumentSupported: doc['client_id_metadata_document_supported'] === true,
  };
  const endpoints = {
    authorizationEndpoint: 'authorization_endpoint',
    tokenEndpoint: 'token_endpoint',
    registrationEndpoint: 'registration_endpoint',
    revocationEndpoint: 'revocation_endpoint',
    jwksUri: 'jwks_uri',
  } as const;
  for (const [field, key] of Object.entries(endpoints) as Array<[keyof typeof endpoints, string]>) {
    const value = str(doc, key);
    if (value !== undefined && /^https?:\/\//.test(value)) m[field] = value;
  }
  const scopes = strings(doc, 'scopes_supported');
  if (scopes) m.scopesSupported = scopes;
  return m;
}

export interface ProtectedResourceMetadata {
  resource: string;
  authorizationServers: string[];
  scopesSupported?: string[];
}

/**
 * Which authorization servers protect an MCP server: the `resource_metadata` its 401 names, else the
 * well-known URLs (oauth4webapi's RFC 9728 path insertion, then the root), each checked by oauth4webapi.
 * The document's `resource` must be the server's URL; unlike oauth4webapi, which compares them exactly,
 * a trailing slash or the case of scheme and host may differ (sameResource), as MCP servers publish both.
 */
export async function protectedResourceMetadata(
  serverUrl: string,
  via?: Dispatcher,
): Promise<ProtectedResourceMetadata> {
  const url = new URL(serverUrl);
  const challenged = await challengedMetadataUrl(serverUrl, via);
  const root = `${url.origin}/.well-known/oauth-protected-resource`;
  const candidates: Array<() => Promise<Response>> = [
    ...(challenged ? [() => guardedFetch(challenged, {}, via)] : []),
    () => oauth.resourceDiscoveryRequest(url, requestOptions(via)),
    ...(url.pathname.replace(/\/+$/, '') === '' ? [] : [() => guardedFetch(root, {}, via)]),
  ];
  for (const request of candidates) {
    let doc: oauth.ResourceServer;
    try {
      doc = await oauth.processResourceDiscoveryResponse(url, await request());
    } catch (err) {
      // A refused address is the answer, not a reason to try the next URL.
      if (err instanceof OAuthAddressRefusedError) throw err;
      if (err instanceof OAuthHttpError) continue;
      if (err instanceof oauth.OperationProcessingError && err.code !== oauth.JSON_ATTRIBUTE_COMPARISON)
        continue;
      // Another resource, or one that is not a URL (a TypeError from oauth4webapi's comparison).
      const body = (err as { cause?: { body?: oauth.ResourceServer } }).cause?.body;
      if (!body || !sameResource(body.resource, serverUrl)) {
        throw new OAuthHttpError(`The resource metadata found for ${serverUrl} describes another resource`);
      }
      doc = body;
    }
    const servers = strings(doc as Record<string, unknown>, 'authorization_servers') ?? [];
    if (servers.length === 0) throw new OAuthHttpError(`${serverUrl} names no authorization server`);
    const scopes = strings(doc as Record<string, unknown>, 'scopes_supported');
    return {
      resource: doc.resource,
      authorizationServers: servers,
      ...(scopes && { scopesSupported: scopes }),
    };
  }
  throw new OAuthHttpError(`${serverUrl} publishes no protected resource metadata`);
}

/** The `resource_metadata` of the server's 401 challenge to a request without a token. */
async function challengedMetadataUrl(serverUrl: string, via?: Dispatcher): Promise<string | undefined> {
  const reply = await guardedFetch(
    serverUrl,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'server/discover', params: {} }),
    },
    via,
  ).catch(() => undefined);
  if (reply?.status !== 401) return undefined;
  const challenge = reply.headers.get('www-authenticate') ?? '';
  const found = /resource_metadata="([^"]+)"/i.exec(challenge)?.[1];
  if (found === undefined) return undefined;
  try {
    // Only on the server's own origin: a challenge cannot send the gateway to fetch from elsewhere.
    return new URL(found).origin === new URL(serverUrl).origin ? found : undefined;
  } catch {
    return undefined;
  }
}

/** RFC 8707 / RFC 9728 resource identifiers compared as URLs (case of scheme and host, a trailing slash). */
export function sameResource(a: string, b: string): boolean {
  try {
    const x = new URL(a);
    const y = new URL(b);
    const norm = (u: URL) => `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}${u.search}`;
    return norm(x) === norm(y);
  } catch {
    return false;
  }
}
