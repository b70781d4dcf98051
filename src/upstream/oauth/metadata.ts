/**
 * Discovery (MCP authorization, RFC 9728, RFC 8414, OpenID Connect Discovery): where an authorization
 * server's endpoints and keys are, and which authorization server protects an MCP server. Every
 * document is checked against the identifier it was looked up by (`issuer`, `resource`); one that names
 * something else is not used.
 */
import type { Dispatcher } from 'undici';
import { getDocument, OAuthAddressRefusedError, OAuthHttpError, requestJson, str, strings } from './http';

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
 * 8414 with path insertion, OpenID Connect with path insertion, OpenID Connect appended).
 */
export async function authorizationServerMetadata(
  issuer: string,
  via?: Dispatcher,
): Promise<AuthorizationServerMetadata> {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, '');
  const candidates =
    path === ''
      ? [
          `${url.origin}/.well-known/oauth-authorization-server`,
          `${url.origin}/.well-known/openid-configuration`,
        ]
      : [
          `${url.origin}/.well-known/oauth-authorization-server${path}`,
          `${url.origin}/.well-known/openid-configuration${path}`,
          `${url.origin}${path}/.well-known/openid-configuration`,
        ];
  for (const candidate of candidates) {
    const doc = await getDocument(candidate, via).catch((err: unknown) => {
      if (err instanceof OAuthHttpError && err.status !== undefined) return undefined;
      throw err;
    });
    if (!doc) continue;
    if (str(doc, 'issuer') !== issuer) {
      throw new OAuthHttpError(`The metadata at ${candidate} names another issuer than ${issuer}`);
    }
    return { ...toMetadata(issuer, doc), ...(via && { via }) };
  }
  throw new OAuthHttpError(`No authorization server metadata found for ${issuer}`);
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
 * well-known URLs (path insertion, then the root). The document's `resource` must be the server's URL.
 */
export async function protectedResourceMetadata(
  serverUrl: string,
  via?: Dispatcher,
): Promise<ProtectedResourceMetadata> {
  const url = new URL(serverUrl);
  const candidates: string[] = [];
  const challenged = await challengedMetadataUrl(serverUrl, via);
  if (challenged) candidates.push(challenged);
  const path = url.pathname.replace(/\/+$/, '');
  if (path !== '') candidates.push(`${url.origin}/.well-known/oauth-protected-resource${path}`);
  candidates.push(`${url.origin}/.well-known/oauth-protected-resource`);
  for (const candidate of candidates) {
    const doc = await getDocument(candidate, via).catch((err: unknown) => {
      // A refused address is the answer, not a reason to try the next URL.
      if (err instanceof OAuthAddressRefusedError) throw err;
      return undefined;
    });
    if (!doc) continue;
    const resource = str(doc, 'resource');
    if (resource === undefined || !sameResource(resource, serverUrl)) {
      throw new OAuthHttpError(`The resource metadata at ${candidate} describes another resource`);
    }
    const servers = strings(doc, 'authorization_servers') ?? [];
    if (servers.length === 0) throw new OAuthHttpError(`${serverUrl} names no authorization server`);
    const scopes = strings(doc, 'scopes_supported');
    return { resource, authorizationServers: servers, ...(scopes && { scopesSupported: scopes }) };
  }
  throw new OAuthHttpError(`${serverUrl} publishes no protected resource metadata`);
}

/** The `resource_metadata` of the server's 401 challenge to a request without a token. */
async function challengedMetadataUrl(serverUrl: string, via?: Dispatcher): Promise<string | undefined> {
  const reply = await requestJson(
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
