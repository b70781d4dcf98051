/**
 * The OpenID provider of the OAuth tests: test/fixtures/oidc-provider.mjs (oidc-provider, ESM-only) in a
 * child process, and what tests do with it: sign arbitrary claims with its current key, rotate its keys,
 * and walk an authorization request through its (automated) login and consent like a browser would,
 * following redirects with a cookie jar until the client's redirect URI.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { getFreePort } from '../../src/tooling/processes';

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'oidc-provider.mjs');

export interface OidcUser {
  name?: string;
  email?: string;
  groups?: string[];
}

export interface OidcProviderSettings {
  users?: Record<string, OidcUser>;
  /** Static clients (oidc-provider client metadata). */
  clients?: Array<Record<string, unknown>>;
  /** Resource URL prefix → scope and access-token lifetime in seconds. */
  resources?: Record<string, { scope?: string; ttl?: number }>;
  /** Dynamic client registration; default on. */
  registration?: boolean;
}

export interface OidcProvider {
  issuer: string;
  /** Signs `payload` with the provider's current key (header fields override `alg`, `kid`, `typ`). */
  sign(payload: Record<string, unknown>, header?: Record<string, unknown>): Promise<string>;
  /** A new signing key; with `dropOld` the old one leaves the published key set. */
  rotate(dropOld?: boolean): Promise<string>;
  /**
   * Follows an authorization URL through login (as `login`, by login_hint) and consent up to the redirect
   * to `redirectUri`; returns that redirect's URL (with `code`, `state`, `iss`).
   */
  authorize(authorizationUrl: string, login: string, redirectUri: string): Promise<URL>;
  /** Every token pair the token endpoint answered with, oldest first. */
  issued(): Promise<Array<{ access: string; refresh: string | null }>>;
  /** Destroys every refresh token issued so far (the grants end at the provider). */
  revokeIssued(): Promise<void>;
  /** Makes the revocation endpoint answer 503 (or work again). */
  failRevocation(fail: boolean): Promise<void>;
  /** RFC 7662 introspection, authenticated as `client`. */
  introspect(token: string, client: { id: string; secret: string }): Promise<{ active: boolean }>;
  close(): Promise<void>;
}

export async function startOidcProvider(settings: OidcProviderSettings = {}): Promise<OidcProvider> {
  const child = spawn(process.execPath, [FIXTURE, JSON.stringify(settings)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const issuer = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`oidc fixture did not start: ${stderr}`)), 20_000);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /READY (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] as string);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`oidc fixture exited ${code}: ${stderr}`));
    });
  });
  const control = async (action: string, body: unknown) => {
    const res = await fetch(`${issuer}/__test/${action}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return (await res.json()) as Record<string, string>;
  };
  return {
    issuer,
    async sign(payload, header = {}) {
      return (await control('sign', { payload, header }))['jwt'] as string;
    },
    async rotate(dropOld = false) {
      return (await control('rotate', { dropOld }))['kid'] as string;
    },
    authorize: (url, login, redirectUri) => followAuthorization(url, login, redirectUri),
    async issued() {
      return (await control('issued', {}))['issued'] as unknown as Array<{
        access: string;
        refresh: string | null;
      }>;
    },
    async revokeIssued() {
      await control('revoke-issued', {});
    },
    async failRevocation(fail) {
      await control('fail-revocation', { fail });
    },
    async introspect(token, client) {
      const res = await fetch(`${issuer}/token/introspection`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
        },
        body: new URLSearchParams({ token }).toString(),
      });
      if (res.status !== 200) throw new Error(`introspection: HTTP ${res.status} ${await res.text()}`);
      return (await res.json()) as { active: boolean };
    },
    close: () => stop(child),
  };
}

/** A browser's walk through the provider: redirects with cookies, login by hint, automated consent. */
export async function followAuthorization(
  authorizationUrl: string,
  login: string,
  redirectUri: string,
): Promise<URL> {
  const jar = new Map<string, string>();
  const start = new URL(authorizationUrl);
  start.searchParams.set('login_hint', login);
  let next = start.toString();
  for (let hop = 0; hop < 20; hop++) {
    if (next.startsWith(redirectUri)) return new URL(next);
    const res = await fetch(next, {
      redirect: 'manual',
      headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair?.indexOf('=') ?? -1;
      if (pair && eq > 0) jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || !location) {
      throw new Error(`authorization stopped at ${next}: HTTP ${res.status} ${await res.text()}`);
    }
    next = new URL(location, next).toString();
  }
  throw new Error('too many redirects during authorization');
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 3000).unref();
  });
}

/**
 * A port nothing listens on now: the gateway's public origin (which names OAuth resources and redirect
 * URIs) must be known before it starts. From below the kernel's ephemeral range (getFreePort): a port
 * the OS chose (bind to 0) was taken by some connection's local end, in the seconds before the gateway
 * bound it, often enough to fail a CI run (EADDRINUSE).
 */
export function freePort(): Promise<number> {
  return getFreePort('127.0.0.1');
}

/** The `name=value` pair of a cookie a response sets. */
export function cookieOf(res: Response, name: string): string {
  const line = res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
  if (!line) throw new Error(`no ${name} cookie`);
  return (line.split(';')[0] as string).trim();
}

/** A dashboard session cookie for the holder of `token`, signed in at the gateway `base`. */
export async function dashboardSession(base: string, token: string): Promise<string> {
  const res = await fetch(`${base}/v1/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token }),
  });
  if (res.status !== 200) throw new Error(`sign-in answered ${res.status}`);
  return cookieOf(res, 'taskrouter_session');
}
