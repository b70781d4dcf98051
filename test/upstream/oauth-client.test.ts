/**
 * The upstream OAuth client on oauth4webapi (src/upstream/oauth): what the gateway adds to the library
 * and what it makes of the library's errors, against a scripted authorization server on loopback:
 *
 * - discovery takes the first well-known URL with a document for the issuer, passes over the others, and
 *   refuses a document naming another issuer;
 * - a refusal keeps the server's OAuth error code, from the body too when a 401 carries a `Basic`
 *   challenge (RFC 6749 §5.2 invalid_client), and never the client secret or the token sent;
 * - a token that is not a bearer token is not kept; a reply over the size bound is not read.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { revokeToken, refreshTokens } from '../../src/upstream/oauth/client';
import { OAuthHttpError } from '../../src/upstream/oauth/http';
import { authorizationServerMetadata } from '../../src/upstream/oauth/metadata';

const SECRET = 'client-secret-never-in-errors';
const REFRESH = 'refresh-token-never-in-errors';

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;
let handle: Handler = (_req, res) => res.writeHead(404).end();
const seen: string[] = [];
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString()));
  req.on('end', () => {
    seen.push(`${req.method} ${req.url}`);
    handle(req, res, body);
  });
});
let issuer = '';

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

/** Metadata at the OpenID Connect well-known URL only (the RFC 8414 one answers 404). */
function metadataServer(token: Handler, doc: Record<string, unknown> = {}): Handler {
  return (req, res, body) => {
    if (req.url === '/tenant/.well-known/openid-configuration') {
      return json(res, 200, {
        issuer: `${issuer}/tenant`,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        revocation_endpoint: `${issuer}/revoke`,
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic'],
        ...doc,
      });
    }
    if (req.url === '/token' || req.url === '/revoke') return token(req, res, body);
    res.writeHead(404).end();
  };
}

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => (seen.length = 0));

test('discovery tries the well-known URLs in the MCP order and takes the first document for the issuer', async () => {
  handle = metadataServer(() => {});
  const as = await authorizationServerMetadata(`${issuer}/tenant`);
  expect(as).toMatchObject({ tokenEndpoint: `${issuer}/token`, codeChallengeMethods: ['S256'] });
  expect(seen).toEqual([
    'GET /.well-known/oauth-authorization-server/tenant',
    'GET /.well-known/openid-configuration/tenant',
    'GET /tenant/.well-known/openid-configuration',
  ]);
});

test('a metadata document naming another issuer is refused, not passed over', async () => {
  handle = metadataServer(() => {}, { issuer: 'https://elsewhere.example' });
  await expect(authorizationServerMetadata(`${issuer}/tenant`)).rejects.toThrow(/names another issuer/);
});

test('a refusal keeps its OAuth error code, from the body behind a Basic challenge too, and no secret', async () => {
  let authorization: string | undefined;
  handle = metadataServer((req, res) => {
    authorization = req.headers.authorization;
    json(
      res,
      401,
      { error: 'invalid_client', error_description: 'unknown client' },
      {
        'www-authenticate': 'Basic realm="token"',
      },
    );
  });
  const as = await authorizationServerMetadata(`${issuer}/tenant`);
  const err = await refreshTokens(
    as,
    { clientId: 'gw', clientSecret: SECRET },
    { refreshToken: REFRESH },
  ).catch((e: unknown) => e);
  // RFC 6749 §2.3.1: id and secret form-encoded, then Basic (oauth4webapi encodes even '-' as %2D).
  const pair = Buffer.from(authorization?.replace(/^Basic /, '') ?? '', 'base64').toString();
  expect(pair.split(':').map(decodeURIComponent)).toEqual(['gw', SECRET]);
  expect(err).toBeInstanceOf(OAuthHttpError);
  expect(err).toMatchObject({ status: 401, oauthError: 'invalid_client' });
  expect((err as Error).message).toBe(`${issuer} refused (HTTP 401, invalid_client): unknown client`);
  expect(JSON.stringify(err)).not.toContain(SECRET);
  expect(JSON.stringify(err)).not.toContain(REFRESH);

  handle = metadataServer((_req, res) => json(res, 400, { error: 'invalid_grant' }));
  await expect(refreshTokens(as, { clientId: 'gw' }, { refreshToken: REFRESH })).rejects.toMatchObject({
    status: 400,
    oauthError: 'invalid_grant',
  });
  handle = metadataServer((_req, res) => res.writeHead(503).end('down'));
  await expect(revokeToken(as, { clientId: 'gw' }, REFRESH, 'refresh_token')).rejects.toThrow(
    `${issuer} refused (HTTP 503)`,
  );
});

test('only a bearer token is kept, and a reply over the size bound is not read', async () => {
  handle = metadataServer((_req, res) => json(res, 200, { access_token: 'a', token_type: 'DPoP' }));
  const as = await authorizationServerMetadata(`${issuer}/tenant`);
  await expect(refreshTokens(as, { clientId: 'gw' }, { refreshToken: REFRESH })).rejects.toThrow(
    'did not issue a bearer access token',
  );
  handle = metadataServer((_req, res) =>
    json(res, 200, { access_token: 'a', token_type: 'Bearer', padding: 'x'.repeat(2 * 1024 * 1024) }),
  );
  await expect(refreshTokens(as, { clientId: 'gw' }, { refreshToken: REFRESH })).rejects.toThrow(
    'sent a reply larger than 1048576 bytes',
  );
  handle = metadataServer((_req, res) =>
    json(res, 200, { access_token: 'a', token_type: 'Bearer', expires_in: 60 }),
  );
  const tokens = await refreshTokens(as, { clientId: 'gw' }, { refreshToken: REFRESH });
  expect(tokens).toMatchObject({ accessToken: 'a', refreshToken: REFRESH });
  expect(tokens.expiresAt).toBeGreaterThan(Date.now());
});
