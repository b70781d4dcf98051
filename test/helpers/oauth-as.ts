/**
 * A small real OAuth authorization server over HTTP on 127.0.0.1, for what the oidc-provider fixture
 * cannot be made to do on loopback (it fetches client metadata documents only over https and never from
 * loopback addresses): the authorization code flow with PKCE (S256) and RFC 9207 `iss`, Client ID
 * Metadata Documents (`cimd`: it fetches the document at the `client_id` URL and checks it, as the draft
 * says), dynamic registration (`registration`), RFC 8693 token exchange (`exchange`), and a protected
 * MCP resource at `/mcp` (RFC 9728 metadata; a request with a token this server issued is relayed to
 * `relayTo`, anything else gets a 401 challenge). Everything it did is recorded for the test to read.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TestAuthorizationServerOptions {
  /** Advertise `client_id_metadata_document_supported` and accept document URLs as client ids. */
  cimd?: boolean;
  /** Offer dynamic client registration (RFC 7591). */
  registration?: boolean;
  /** Accept RFC 8693 token exchange from this client (a confidential client: Basic or form secret). */
  exchange?: { clientId: string; clientSecret: string };
}

export interface ExchangeRecord {
  subject: string;
  subjectTokenType: string | null;
  resource: string | null;
  audience: string | null;
  scope: string | null;
  issued: string;
}

export interface TestAuthorizationServer {
  issuer: string;
  /** The protected MCP resource this server guards (`<issuer>/mcp`). */
  resource: string;
  /** Client metadata documents fetched (their URLs), in order. */
  documentFetches: string[];
  /** Dynamic registrations made (their client ids). */
  registrations: string[];
  /** Authorization requests (their client ids). */
  authorizations: string[];
  /** Token exchanges granted. */
  exchanges: ExchangeRecord[];
  /** Token requests refused, with the reason. */
  refusals: string[];
  /** Authorization headers seen at `/mcp` with a valid token (the upstream's view). */
  resourceTokens: string[];
  /** Lifetime (s) of the tokens issued from now on. */
  expiresIn: number;
  /** Where `/mcp` relays requests that carry a token this server issued (an MCP server's URL). */
  relayTo?: string;
  close(): Promise<void>;
}

interface Code {
  clientId: string;
  redirectUri: string;
  challenge: string;
  resource: string | null;
}

export async function startTestAuthorizationServer(
  opts: TestAuthorizationServerOptions = {},
): Promise<TestAuthorizationServer> {
  const codes = new Map<string, Code>();
  const clients = new Map<string, { redirectUris: string[] }>();
  const issued = new Set<string>();
  let origin = '';
  const as: TestAuthorizationServer = {
    issuer: '',
    resource: '',
    documentFetches: [],
    registrations: [],
    authorizations: [],
    exchanges: [],
    refusals: [],
    resourceTokens: [],
    expiresIn: 3600,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };

  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const readBody = async (req: IncomingMessage) => {
    let body = '';
    for await (const chunk of req) body += String(chunk);
    return body;
  };
  const newToken = (prefix: string) => {
    const token = `${prefix}-${randomBytes(16).toString('base64url')}`;
    issued.add(token);
    return token;
  };

  /** The client's redirect URIs: from its metadata document (CIMD) or its registration. */
  async function redirectUrisOf(clientId: string): Promise<string[] | string> {
    if (opts.cimd && /^https?:\/\//.test(clientId)) {
      as.documentFetches.push(clientId);
      const res = await fetch(clientId, { redirect: 'manual' });
      if (res.status !== 200) return `document answered ${res.status}`;
      const doc = (await res.json()) as Record<string, unknown>;
      if (doc['client_id'] !== clientId) return 'document names another client_id';
      if (doc['token_endpoint_auth_method'] !== 'none') return 'document client is not public';
      if ('client_secret' in doc) return 'document holds a secret';
      return Array.isArray(doc['redirect_uris']) ? (doc['redirect_uris'] as string[]) : 'no redirect_uris';
    }
    return clients.get(clientId)?.redirectUris ?? 'unknown client';
  }

  async function authorize(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const q = url.searchParams;
    const clientId = q.get('client_id') ?? '';
    as.authorizations.push(clientId);
    const uris = await redirectUrisOf(clientId);
    const redirectUri = q.get('redirect_uri') ?? '';
    if (typeof uris === 'string' || !uris.includes(redirectUri)) {
      return json(res, 400, {
        error: 'invalid_request',
        detail: typeof uris === 'string' ? uris : 'redirect_uri',
      });
    }
    if (q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge')) {
      return json(res, 400, { error: 'invalid_request', detail: 'PKCE' });
    }
    const code = randomBytes(16).toString('base64url');
    codes.set(code, {
      clientId,
      redirectUri,
      challenge: q.get('code_challenge') as string,
      resource: q.get('resource'),
    });
    const back = new URL(redirectUri);
    back.searchParams.set('code', code);
    back.searchParams.set('state', q.get('state') ?? '');
    back.searchParams.set('iss', as.issuer);
    res.writeHead(302, { location: back.toString() });
    res.end();
  }

  function refuse(res: ServerResponse, why: string, error = 'invalid_grant'): void {
    as.refusals.push(why);
    json(res, 400, { error, error_description: why });
  }

  async function token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = new URLSearchParams(await readBody(req));
    const grant = form.get('grant_type');
    if (grant === 'authorization_code') {
      const code = codes.get(form.get('code') ?? '');
      codes.delete(form.get('code') ?? '');
      if (!code) return refuse(res, 'unknown code');
      if (form.get('client_id') !== code.clientId) return refuse(res, 'another client');
      if (form.get('redirect_uri') !== code.redirectUri) return refuse(res, 'another redirect_uri');
      const verifier = form.get('code_verifier') ?? '';
      if (createHash('sha256').update(verifier).digest('base64url') !== code.challenge) {
        return refuse(res, 'PKCE verifier does not match');
      }
      return json(res, 200, {
        access_token: newToken('at'),
        token_type: 'Bearer',
        expires_in: as.expiresIn,
      });
    }
    if (grant === 'urn:ietf:params:oauth:grant-type:token-exchange' && opts.exchange) {
      const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const [id, secret] = basic
        ? Buffer.from(basic, 'base64')
            .toString()
            .split(':')
            .map((p) => decodeURIComponent(p))
        : [form.get('client_id'), form.get('client_secret')];
      if (id !== opts.exchange.clientId || secret !== opts.exchange.clientSecret) {
        return refuse(res, 'client authentication failed', 'invalid_client');
      }
      const subjectToken = form.get('subject_token') ?? '';
      // The subject's `sub`, read from the JWT (the issuer that signed it is the gateway's concern).
      let subject = '';
      try {
        const payload = JSON.parse(Buffer.from(subjectToken.split('.')[1] ?? '', 'base64url').toString());
        subject = String((payload as { sub?: unknown }).sub ?? '');
      } catch {
        return refuse(res, 'subject_token is not a JWT');
      }
      const issuedToken = newToken(`ex-${subject}`);
      as.exchanges.push({
        subject,
        subjectTokenType: form.get('subject_token_type'),
        resource: form.get('resource'),
        audience: form.get('audience'),
        scope: form.get('scope'),
        issued: issuedToken,
      });
      return json(res, 200, {
        access_token: issuedToken,
        issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        token_type: 'Bearer',
        expires_in: as.expiresIn,
      });
    }
    refuse(res, `grant ${grant ?? 'none'} not offered`, 'unsupported_grant_type');
  }

  async function register(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = JSON.parse(await readBody(req)) as { redirect_uris?: string[] };
    const clientId = `dcr-${randomBytes(6).toString('hex')}`;
    clients.set(clientId, { redirectUris: body.redirect_uris ?? [] });
    as.registrations.push(clientId);
    json(res, 201, { client_id: clientId, token_endpoint_auth_method: 'none' });
  }

  /** The protected MCP resource: a request with a token issued here goes on to `relayTo`. */
  async function resource(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const tokenSent = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (tokenSent === undefined || !issued.has(tokenSent) || !as.relayTo) {
      res.writeHead(401, {
        'www-authenticate': `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
      });
      return void res.end();
    }
    as.resourceTokens.push(tokenSent);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (typeof v === 'string' && !['host', 'authorization', 'content-length', 'connection'].includes(k))
        headers[k] = v;
    }
    const answer = await fetch(as.relayTo, {
      method: req.method ?? 'POST',
      headers,
      body: body || undefined,
    });
    res.writeHead(answer.status, {
      'content-type': answer.headers.get('content-type') ?? 'application/json',
    });
    res.end(await answer.text());
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', origin);
    const route = `${req.method} ${url.pathname}`;
    const done = (p: Promise<void> | void) =>
      Promise.resolve(p).catch((err: unknown) =>
        json(res, 500, { error: 'server_error', detail: String(err) }),
      );
    switch (route) {
      case 'GET /.well-known/oauth-authorization-server':
        return json(res, 200, {
          issuer: as.issuer,
          authorization_endpoint: `${origin}/authorize`,
          token_endpoint: `${origin}/token`,
          ...(opts.registration && { registration_endpoint: `${origin}/register` }),
          code_challenge_methods_supported: ['S256'],
          token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
          grant_types_supported: ['authorization_code', 'urn:ietf:params:oauth:grant-type:token-exchange'],
          authorization_response_iss_parameter_supported: true,
          ...(opts.cimd && { client_id_metadata_document_supported: true }),
        });
      case 'GET /.well-known/oauth-protected-resource/mcp':
        return json(res, 200, { resource: as.resource, authorization_servers: [as.issuer] });
      case 'GET /authorize':
        return void done(authorize(req, res, url));
      case 'POST /token':
        return void done(token(req, res));
      case 'POST /register':
        if (opts.registration) return void done(register(req, res));
        break;
      case 'POST /mcp':
      case 'GET /mcp':
      case 'DELETE /mcp':
        return void done(resource(req, res));
    }
    json(res, 404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  as.issuer = origin;
  as.resource = `${origin}/mcp`;
  return as;
}
